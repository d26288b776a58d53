"""Reports: ``report.md`` for runs (:mod:`awctl.report.markdown`) and PNG line plots (:mod:`awctl.report.plots`).

matplotlib is imported only when a plot is drawn (Agg backend, no display needed).
"""
