"""The hand-written episodes ``record.py`` lays out: what each agent called and what the tools answered.

Each AgentWorldBench episode is ``(file group, declared tools, turns, prefix lists?, fenced actions?)`` with
turns ``(tool call, tool output, agent thought or None)``. Snippets are cut from the pages (``cut``) or, as
engines sometimes show, a description of the page that is not on it.
"""

from __future__ import annotations

from record import (
    DictMemory,
    awb_pages,
    awb_search,
    call,
    cut,
    paragraphs,
    qwen_run,
    qwen_search,
    qwen_visit,
    result,
)
from record_pages import PAGES

FULL = ["web_search", "web_extractor", "dict_memory"]
READ = ["web_search", "web_extractor"]


def about(key: str, *phrases: str) -> list[int]:
    """Indices of the page's paragraphs that mention any of ``phrases`` (a goal-filtered read)."""
    return [i for i, p in enumerate(paragraphs(key)) if any(ph.lower() in p.lower() for ph in phrases)]


def S(*blocks: tuple[str, list[dict]], thought: str | None = None) -> tuple[dict, str, str | None]:
    queries = [q for q, _ in blocks]
    return call("web_search", queries=queries), awb_search(list(blocks)), thought


def X(reads: list[tuple[str, list[int] | None]], goal: str = "", thought: str | None = None) -> tuple:
    urls = [k if k.startswith("http") else PAGES[k]["url"] for k, _ in reads]
    return call("web_extractor", urls=urls, goal=goal), awb_pages(reads, goal), thought


def M(mem: DictMemory, action: str, key: str | None = None, value=None, thought: str | None = None) -> tuple:
    args = {"action": action}
    if key is not None:
        args["key"] = key
    if action == "set":
        args["value"] = value
    return call("dict_memory", **args), mem(action, key, value), thought


def R(key: str, snippet: str) -> dict:
    return result(key, snippet)


def awb_episodes() -> list[tuple]:
    eps: list[tuple] = []

    # 1. Eiffel Tower: search, read the top hit, note the answer, read it back.
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "eiffel tower completion year",
                        [
                            R("eiffel", cut("eiffel", "Construction began in January 1887", 16)),
                            R("eiffel_official", cut("eiffel_official", "Height: 330 m", 10)),
                        ],
                    )
                ),
                X(
                    [("eiffel", about("eiffel", "Construction began"))],
                    goal="year the tower was completed",
                    thought="The first result should state when construction finished.",
                ),
                M(m, "set", "completed", "March 1889"),
                M(m, "get", "completed", thought="Double-check the stored answer before replying."),
            ],
            False,
            False,
        )
    )

    # 2. Python 3.12 release and headline features, two queries in one call.
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "python 3.12 release date",
                        [
                            R(
                                "py312",
                                cut("py312", "Python 3.12 was released on October 2, 2023", 8, tail=False),
                            ),
                            R(
                                "py313",
                                cut("py313", "This article explains the new features in Python 3.13", 16),
                            ),
                        ],
                    ),
                    (
                        "PEP 695 type parameter syntax",
                        [
                            R("pep695", cut("pep695", "This PEP specifies an improved syntax", 20)),
                            R("py312", cut("py312", "PEP 695: a new type parameter syntax", 14)),
                        ],
                    ),
                ),
                X([("py312", None)], thought="Read the whole What's New page."),
                M(m, "set", "release_date", "2023-10-02"),
                M(m, "set", "features", ["PEP 695", "PEP 701", "PEP 684"]),
                M(m, "list"),
                M(m, "get", "features"),
            ],
            False,
            True,
        )
    )

    # 3. Kilimanjaro height, with a goal-filtered read and an update of the note.
    m = DictMemory(indent=2)
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "highest mountain in africa height",
                        [
                            R("kilimanjaro", cut("kilimanjaro", "It is the highest mountain in Africa", 22)),
                            R("everest", "Everest's height, climbing routes and history of ascents."),
                        ],
                    )
                ),
                M(m, "set", "mountain", "Kilimanjaro"),
                X(
                    [("kilimanjaro", about("kilimanjaro", "5,895", "Uhuru"))],
                    goal="summit elevation in metres",
                ),
                M(m, "set", "height_m", 5895),
                M(m, "get", "height_m"),
                M(m, "get", "mountain"),
            ],
            True,
            False,
        )
    )

    # 4. Speed of sound: search twice (the second search lists the same page again), read, store.
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "speed of sound in air",
                        [
                            R("sound", cut("sound", "At 20 °C (68 °F), the speed of sound", 15)),
                        ],
                    )
                ),
                S(
                    (
                        "speed of sound water steel",
                        [
                            R("sound", cut("sound", "At 20 °C (68 °F), the speed of sound", 15)),
                        ],
                    ),
                    thought="Check whether the same article also covers water and steel.",
                ),
                X([("sound", about("sound", "water", "20 °C"))], goal="speed in air, water and steel"),
                M(m, "set", "air_mps", 343),
                M(m, "set", "water_mps", 1480),
                M(m, "get", "air_mps"),
            ],
            False,
            False,
        )
    )

    # 5. Carbon-14: the first read fails on a second URL (404), the note is corrected.
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "carbon 14 half life",
                        [
                            R("c14", cut("c14", "Carbon-14 has a half-life of 5,730", 14)),
                        ],
                    )
                ),
                X([("c14", None), ("https://www.radiocarbon.example.org/half-life", None)]),
                M(m, "set", "half_life", "5568 years"),
                M(
                    m,
                    "set",
                    "half_life",
                    "5730 ± 40 years",
                    thought="5,568 is the Libby value; use the Cambridge one.",
                ),
                M(m, "get", "half_life"),
                M(m, "delete", "half_life"),
                M(m, "get", "half_life"),
            ],
            False,
            False,
        )
    )

    # 6. SQLite limits: read with a goal, remember two numbers, list the keys.
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "sqlite maximum database size",
                        [
                            R(
                                "sqlite_limits",
                                cut("sqlite_limits", "The maximum page count is 4294967294", 19),
                            ),
                        ],
                    ),
                    (
                        "sqlite max columns default",
                        [
                            R(
                                "sqlite_limits",
                                cut("sqlite_limits", "sets the maximum number of columns", 10),
                            ),
                        ],
                    ),
                ),
                X(
                    [("sqlite_limits", about("sqlite_limits", "database size", "columns"))],
                    goal="database size and column limits",
                ),
                M(m, "set", "max_db_size", "about 281 TB"),
                M(m, "set", "max_columns", 2000),
                M(m, "list"),
                M(m, "get", "max_db_size"),
            ],
            True,
            True,
        )
    )

    # 7. Amazon vs Nile: two pages in one read.
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "amazon river length km",
                        [
                            R("amazon", cut("amazon", "The length of the Amazon is usually given", 17)),
                            R(
                                "nile",
                                cut(
                                    "nile", "The Nile has historically been considered the longest river", 17
                                ),
                            ),
                        ],
                    )
                ),
                X(
                    [("amazon", about("amazon", "kilometres")), ("nile", about("nile", "kilometres"))],
                    goal="river length in kilometres",
                ),
                M(m, "set", "amazon_km", 6400),
                M(m, "set", "nile_km", 6650),
                M(m, "get", "nile_km"),
            ],
            False,
            False,
        )
    )

    # 8. Nobel Prize 2019 (a search with one query that finds nothing).
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "nobel chemistry 2019 laureates lithium",
                        [
                            R(
                                "nobel2019",
                                cut("nobel2019", "The Nobel Prize in Chemistry 2019 was awarded", 18),
                            ),
                        ],
                    ),
                    ("goodenough whittingham yoshino prize share exact fraction", []),
                ),
                X([("nobel2019", None)]),
                M(m, "set", "laureates", ["John B. Goodenough", "M. Stanley Whittingham", "Akira Yoshino"]),
                M(m, "get", "laureates"),
            ],
            False,
            False,
        )
    )

    # 9. Rust 2024 edition (research notes kept as an object).
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "rust 2024 edition stable release",
                        [
                            R(
                                "rust185",
                                cut("rust185", "We are excited to announce that the Rust 2024 Edition", 12),
                            ),
                            R(
                                "rust_editions",
                                cut("rust_editions", "There have been four editions so far", 14),
                            ),
                        ],
                    )
                ),
                X(
                    [("rust185", about("rust185", "1.85.0", "2024 Edition"))],
                    goal="which Rust version stabilized 2024",
                ),
                M(m, "set", "rust", {"edition": "2024", "version": "1.85.0", "date": "2025-02-20"}),
                S(
                    (
                        "rust editions list",
                        [
                            R(
                                "rust_editions",
                                cut("rust_editions", "There have been four editions so far", 14),
                            ),
                            R(
                                "rust185",
                                cut("rust185", "We are excited to announce that the Rust 2024 Edition", 12),
                            ),
                        ],
                    )
                ),
                M(m, "get", "rust"),
            ],
            False,
            False,
        )
    )

    # 10. Tallest buildings: Europe vs EU.
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "tallest building in europe",
                        [
                            R("lakhta", cut("lakhta", "Standing 462 metres tall", 14)),
                            R("varso", cut("varso", "With a height of 310 metres", 16)),
                        ],
                    )
                ),
                X([("varso", None)], thought="The EU record is a different building; read it."),
                M(m, "set", "europe", "Lakhta Center (462 m)"),
                M(m, "set", "eu", "Varso Tower (310 m)"),
                S(
                    (
                        "lakhta center height",
                        [
                            R("lakhta", cut("lakhta", "Standing 462 metres tall", 14)),
                        ],
                    )
                ),
                M(m, "get", "europe"),
            ],
            False,
            False,
        )
    )

    # 11-16: search and read, no memory tool declared.
    eps.append(
        (
            "read",
            READ,
            [
                S(
                    (
                        "marie curie nobel prizes",
                        [
                            R("curie", cut("curie", "She shared the 1903 Nobel Prize in Physics", 16)),
                        ],
                    )
                ),
                X([("curie", None)]),
            ],
            False,
            False,
        )
    )
    eps.append(
        (
            "read",
            READ,
            [
                S(
                    (
                        "who created git",
                        [
                            R("git", cut("git", "It was originally created by Linus Torvalds", 13)),
                        ],
                    ),
                    (
                        "bitkeeper license withdrawn",
                        [
                            R("git", cut("git", "Torvalds started work on Git after", 15)),
                        ],
                    ),
                ),
                X([("git", about("git", "Torvalds"))], goal="who created Git and when"),
            ],
            True,
            False,
        )
    )
    eps.append(
        (
            "read",
            READ,
            [
                S(
                    (
                        "http/3 rfc number",
                        [
                            R(
                                "rfc9114",
                                cut(
                                    "rfc9114",
                                    "This document describes a mapping of HTTP semantics over QUIC",
                                    10,
                                    tail=False,
                                ),
                            ),
                            R(
                                "rfc9000",
                                cut(
                                    "rfc9000",
                                    "This document defines the core of the QUIC transport protocol",
                                    11,
                                ),
                            ),
                        ],
                    )
                ),
                X([("rfc9114", None), ("rfc9000", None)], thought="Compare the two RFCs."),
                S(
                    (
                        "quic rfc 9000 published",
                        [
                            R(
                                "rfc9000",
                                cut(
                                    "rfc9000",
                                    "This document defines the core of the QUIC transport protocol",
                                    11,
                                ),
                            ),
                        ],
                    )
                ),
            ],
            False,
            True,
        )
    )
    eps.append(
        (
            "read",
            READ,
            [
                S(
                    (
                        "unicode 16 release date",
                        [
                            R(
                                "unicode16",
                                cut(
                                    "unicode16",
                                    "Version 16.0 of the Unicode Standard was released",
                                    11,
                                    tail=False,
                                ),
                            ),
                        ],
                    )
                ),
                X([("unicode16", about("unicode16", "5,185"))], goal="how many characters were added"),
            ],
            False,
            False,
        )
    )
    eps.append(
        (
            "read",
            READ,
            [
                S(
                    (
                        "distance earth mars closest",
                        [
                            R("mars", cut("mars", "At its closest it is about 54.6", 15)),
                            R("sun_light", "Facts about the Sun: size, distance, temperature and light."),
                        ],
                    )
                ),
                X([("mars", about("mars", "closest"))], goal="closest and average distance"),
                S(
                    (
                        "sunlight travel time to earth",
                        [
                            R(
                                "sun_light",
                                cut("sun_light", "Its light takes about 8 minutes", 10, tail=False),
                            ),
                            R("mars", cut("mars", "At its closest it is about 54.6", 15)),
                        ],
                    )
                ),
                X([("sun_light", None)]),
            ],
            False,
            False,
        )
    )
    eps.append(
        (
            "read",
            READ,
            [
                S(
                    (
                        "python zoneinfo added version",
                        [
                            R(
                                "zoneinfo",
                                cut("zoneinfo", "The zoneinfo module provides a concrete time zone", 20),
                            ),
                        ],
                    )
                ),
                X([("zoneinfo", None)], goal=""),
            ],
            False,
            True,
        )
    )

    # 17-18: search only (the tool list names web_search alone).
    eps.append(
        (
            "searchonly",
            ["web_search"],
            [
                S(
                    (
                        "postgresql 16 release",
                        [
                            R(
                                "pg16",
                                "PostgreSQL 16 release announcement: performance, logical replication and more.",
                            ),
                        ],
                    )
                ),
                S(
                    (
                        "postgresql 16 parallel outer joins",
                        [
                            R(
                                "pg16",
                                cut(
                                    "pg16",
                                    "can run queries in parallel for full and right outer joins",
                                    10,
                                    tail=False,
                                ),
                            ),
                        ],
                    )
                ),
            ],
            False,
            False,
        )
    )
    eps.append(
        (
            "searchonly",
            ["web_search"],
            [
                S(
                    (
                        "danube countries",
                        [
                            R("danube", cut("danube", "The Danube is 2,850 kilometres long", 16)),
                        ],
                    ),
                    (
                        "danube capital cities",
                        [
                            R("danube", cut("danube", "The Danube is 2,850 kilometres long", 16)),
                        ],
                    ),
                ),
                S(
                    (
                        "second longest river in europe",
                        [
                            R(
                                "danube",
                                cut("danube", "The Danube is the second-longest river in Europe", 12),
                            ),
                            R("amazon", "The Amazon River: length, basin, discharge and tributaries."),
                        ],
                    ),
                    thought="Is the Danube also the second-longest river in Europe?",
                ),
            ],
            False,
            False,
        )
    )

    # 19-20: reading and notes without a search (the task gives the URL).
    m = DictMemory()
    eps.append(
        (
            "notes",
            ["web_extractor", "dict_memory"],
            [
                X([("hobbit", about("hobbit", "published"))], goal="publication date"),
                M(m, "set", "hobbit_published", "1937-09-21"),
                M(m, "get", "hobbit_published"),
            ],
            False,
            False,
        )
    )
    m = DictMemory()
    eps.append(
        (
            "notes",
            ["web_extractor", "dict_memory"],
            [
                X([("everest", None)]),
                M(m, "set", "everest_m", 8848.86),
                X([("kilimanjaro", about("kilimanjaro", "5,895"))], goal="height in metres"),
                M(m, "set", "kilimanjaro_m", 5895),
                M(m, "list"),
                M(m, "get", "everest_m"),
            ],
            False,
            False,
        )
    )

    # 21-22: memory only (a note-taking session), and search with memory.
    m = DictMemory()
    eps.append(
        (
            "notes",
            ["dict_memory"],
            [
                M(m, "list"),
                M(m, "set", "todo", ["check penicillin year", "check iPhone release"]),
                M(m, "get", "draft"),
                M(m, "set", "draft", "Fleming, 1928"),
                M(m, "get", "todo"),
                M(m, "delete", "todo"),
                M(m, "list"),
            ],
            False,
            False,
        )
    )
    m = DictMemory()
    eps.append(
        (
            "notes",
            ["web_search", "dict_memory"],
            [
                S(
                    (
                        "first iphone release date",
                        [
                            R(
                                "iphone",
                                cut("iphone", "Steve Jobs announced the iPhone on January 9, 2007", 14),
                            ),
                        ],
                    )
                ),
                M(m, "set", "announced", "2007-01-09"),
                M(m, "set", "released", "2007-06-29"),
                S(
                    (
                        "penicillin discovery year",
                        [
                            R(
                                "penicillin",
                                cut("penicillin", "In 1928, at St. Mary's Hospital in London", 14),
                            ),
                        ],
                    )
                ),
                M(m, "set", "penicillin", 1928),
                M(m, "get", "released"),
                M(m, "get", "penicillin"),
            ],
            True,
            False,
        )
    )

    # 23-24: more research sessions with the whole tool set.
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "reykjavik population",
                        [
                            R("reykjavik", cut("reykjavik", "With a population of around 140,000", 15)),
                        ],
                    )
                ),
                X([("reykjavik", None)]),
                M(m, "set", "reykjavik_population", "about 140,000"),
                S(
                    (
                        "great wall of china length km",
                        [
                            R(
                                "great_wall",
                                cut(
                                    "great_wall",
                                    "A comprehensive archaeological survey completed in 2012",
                                    16,
                                ),
                            ),
                        ],
                    )
                ),
                X([("great_wall", about("great_wall", "21,196"))], goal="total length"),
                M(m, "set", "great_wall_km", 21196),
                M(m, "get", "reykjavik_population"),
            ],
            False,
            True,
        )
    )
    m = DictMemory()
    eps.append(
        (
            "full",
            FULL,
            [
                S(
                    (
                        "boiling point water 2000 m altitude",
                        [
                            R("boiling", cut("boiling", "The boiling point drops by about 1 °C", 13)),
                        ],
                    )
                ),
                X([("boiling", None)]),
                M(m, "set", "boils_at_2000m_c", 93.4),
                S(
                    (
                        "boiling point altitude rule of thumb",
                        [
                            R("boiling", cut("boiling", "The boiling point drops by about 1 °C", 13)),
                        ],
                    )
                ),
                M(m, "get", "boils_at_2000m_c"),
            ],
            False,
            False,
        )
    )
    return eps


def qwen_awb_episodes() -> list[tuple[str, list[tuple]]]:
    """AgentWorldBench rows of sessions with the Qwen web agents' tools (search, visit)."""
    import json

    from record import QWEN_TOOLS

    tools = "\n".join(json.dumps(t, ensure_ascii=False) for t in QWEN_TOOLS[:2])
    system = (
        "# Role\n\nYou simulate the search and visit tools of a web research agent. Predict exactly what the "
        f"tool returns for the agent's next call.\n\n# Tools\n\n<tools>\n{tools}\n</tools>\n\n# Output\n\n"
        "Write only the tool output inside <predicted_observation></predicted_observation>."
    )

    def search(*blocks: tuple[str, list[dict]]) -> tuple:
        return call("search", query=[q for q, _ in blocks]), qwen_search(list(blocks)), None

    def visit(key: str, goal: str, evidence: str, summary: str) -> tuple:
        return (
            call("visit", url=PAGES[key]["url"], goal=goal),
            qwen_visit([(key, evidence, summary)], goal),
            None,
        )

    return [
        (system, [
            search(("hobbit publication date", [
                R("hobbit", cut("hobbit", "It was published in London by George Allen & Unwin", 14, tail=False)),
            ])),
            visit("hobbit", "the publication date", paragraphs("hobbit")[0],
                  "The Hobbit was published in London on 21 September 1937."),
        ]),
        (system, [
            search(("penicillin discovered by", [
                R("penicillin", cut("penicillin", "Alexander Fleming discovered penicillin", 9)),
            ]), ("penicillin mass production war", [])),
            visit("penicillin", "who discovered penicillin and when", paragraphs("penicillin")[0],
                  "Alexander Fleming discovered penicillin in 1928 in London."),
            search(("fleming penicillin 1928", [
                R("penicillin", cut("penicillin", "Alexander Fleming discovered penicillin", 9)),
            ])),
        ]),
        (system, [
            search(("master and margarita author", [
                R("bulgakov", cut("bulgakov", "is a novel by the Soviet writer Mikhail Bulgakov", 15)),
            ])),
            visit("bulgakov", "when it was written and first published", paragraphs("bulgakov")[0] + "\n\n"
                  + paragraphs("bulgakov")[2], "Written 1928-1940 by Mikhail Bulgakov; complete edition 1969."),
        ]),
    ]  # fmt: skip


def qwen_runs() -> list[dict]:
    """Run results of the Qwen web agents' ReAct loop over the same small web."""
    return [
        qwen_run("How tall is the Eiffel Tower today, including antennas?", "2025-03-01", [
            ("I should search for the current height.", call("search", query=["eiffel tower height with antenna"]),
             qwen_search([("eiffel tower height with antenna", [
                 R("eiffel", cut("eiffel", "With its broadcast antennas the tower now stands 330 metres tall", 15)),
                 R("eiffel_official", cut("eiffel_official", "Height: 330 m", 10)),
             ])])),
            ("Confirm on the page.", call("visit", url=PAGES["eiffel"]["url"], goal="current height with antennas"),
             qwen_visit([("eiffel", paragraphs("eiffel")[4],
                          "The tower stands 330 metres tall including antennas since 2022.")],
                        "current height with antennas")),
        ], "330 metres"),
        qwen_run("Which version of Python introduced zoneinfo, and what PEP specified it?", "2025-02-11", [
            ("Search the docs.", call("search", query=["python zoneinfo module version", "PEP 615"]),
             qwen_search([("python zoneinfo module version", [
                 R("zoneinfo", cut("zoneinfo", "The zoneinfo module provides a concrete time zone", 20)),
             ]), ("PEP 615", [])])),
            ("Read the module page.", call("visit", url=[PAGES["zoneinfo"]["url"]], goal="version added and PEP"),
             qwen_visit([("zoneinfo", paragraphs("zoneinfo")[0] + "\n" + paragraphs("zoneinfo")[1],
                          "Added in Python 3.9, specified by PEP 615.")], "version added and PEP")),
        ], "Python 3.9 (PEP 615)"),
        qwen_run("How many years is the half-life of carbon-14, and how old is a sample with 25% left?",
                 "2025-01-20", [
            ("Find the half-life.", call("search", query=["carbon-14 half-life years"]),
             qwen_search([("carbon-14 half-life years", [
                 R("c14", cut("c14", "Carbon-14 has a half-life of 5,730", 14)),
             ])])),
            ("Two half-lives.", call("PythonInterpreter", code="print(2 * 5730)"), "11460"),
            ("Check the page.", call("visit", url=PAGES["c14"]["url"], goal="half-life value"),
             qwen_visit([("c14", paragraphs("c14")[2], "The Cambridge half-life is 5,730 ± 40 years.")],
                        "half-life value")),
        ], "5,730 years; about 11,460 years old"),
        qwen_run("Which rivers are longer, the Amazon or the Nile, and by how much?", "2025-04-02", [
            ("Search both.", call("search", query=["amazon river length", "nile river length"]),
             qwen_search([
                 ("amazon river length", [R("amazon", cut("amazon", "The length of the Amazon is usually given", 17))]),
                 ("nile river length", [R("nile", cut("nile", "The Nile has historically been considered", 17))]),
             ])),
            ("Visit both pages.", call("visit", url=[PAGES["amazon"]["url"], PAGES["nile"]["url"]],
                                       goal="river length in kilometres"),
             qwen_visit([
                 ("amazon", paragraphs("amazon")[2], "Usually about 6,400 km; estimates 6,275-6,992 km."),
                 ("nile", paragraphs("nile")[2], "About 6,650 km, contested."),
             ], "river length in kilometres")),
        ], "It depends on the measurement; usually the Nile (6,650 km) over the Amazon (6,400 km)."),
        qwen_run("When was Unicode 16.0 released?", "2025-05-06", [
            ("Search.", call("search", query=["unicode 16.0 release date"]),
             qwen_search([("unicode 16.0 release date", [
                 R("unicode16", cut("unicode16", "Version 16.0 of the Unicode Standard was released", 11, tail=False)),
             ])])),
            ("Search once more with another wording.", call("search", query=["unicode 16 september 2024"]),
             qwen_search([("unicode 16 september 2024", [
                 R("unicode16", cut("unicode16", "Version 16.0 of the Unicode Standard was released", 11, tail=False)),
             ])])),
        ], "September 10, 2024"),
    ]  # fmt: skip
