"""How a simulator is told to play a web browser: ten role phrasings, the simulation instruction and the
guidance a rubric judge gets for this domain."""

from __future__ import annotations

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder

ROLES: tuple[str, ...] = (
    "You are a world model that simulates a web browser and the web sites an AI agent visits.",
    "Act as a Chromium browser driven by BrowserGym actions: the agent acts, you show the resulting page.",
    "You simulate a browser session turn by turn, rendering each page as its accessibility tree.",
    "Your job is to play the browser and the web applications behind it for a web agent.",
    "You are a web browser. Answer each agent action with the page it leads to, as an accessibility tree.",
    "Simulate the browser an agent controls with click, fill, goto and tab actions; it sees only your pages.",
    "You are an emulator of a web environment: the open tabs and the active page's accessibility tree.",
    "Pretend to be a real browser on real web apps and show the true result of every action.",
    "You model how web pages and the browser's tabs change when an agent interacts with them.",
    "As a browser-and-website simulator, predict the next observation for each BrowserGym action.",
)

SIMULATION_INSTRUCTION = (
    "Predict the browser's observation after the agent's latest action, given everything before it. Keep "
    "the layout of the earlier observations: the open tabs (index, title, URL, the active one marked), the "
    "last action's error when it failed, and the active page's accessibility tree — one node per line, "
    "indented with one tab per depth, `[bid] role 'name'`, ` value='…'` and comma-separated properties. "
    "Elements keep their bids while they stay on the page; a newly loaded page numbers its elements afresh "
    "in document order. fill and select_option change only the targeted field's value (and focus); links "
    "and form submissions load the page they lead to, with the data the web application would now hold. "
    "An action on a bid that is not on the page fails with an error and changes nothing. Do not help or "
    "correct the agent. " + DEFAULT_OUTPUT_RULES
)


def web_prompt_builder() -> PromptBuilder:
    """The web domain's :class:`PromptBuilder` (10 variants)."""
    return PromptBuilder(domain_title="web browser", roles=ROLES, simulation_instruction=SIMULATION_INSTRUCTION)


#: What a rubric judge checks in this domain's observations (``Domain.judge_guidance``).
JUDGE_GUIDANCE = """\
The environment is a web browser driven by BrowserGym actions (click, fill, select_option, goto, go_back,
new_tab, tab_focus...). Each observation lists the open tabs with titles and URLs, the last action's error
if any, and the active page as a flattened accessibility tree: one node per line, tab-indented by depth,
`[bid] role 'name'`, `value='...'` and comma-separated properties. Check that the layout matches the
earlier observations, that bids of elements still on the page are unchanged and unique, that a fill or a
selection shows the new value on that element only, that links and form submissions lead to a plausible
page with the application's data consistent with earlier turns (cart contents, records created or
changed), that tab actions change the tab list correctly, and that actions on missing elements report an
error instead of an effect.
"""
