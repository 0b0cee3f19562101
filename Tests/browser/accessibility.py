"""axe-core's accessibility rules run on the page under test (issue 28 item 8).

axe-core is the engine browsers' own accessibility audits use; `selenium-axe-python`
(pinned in the test venv by scripts/setup.sh; it bundles axe-core 4.9, where the older
`axe-selenium-python` still carries 3.1) has it as one file, which this module
injects into the page and runs. Only violations of impact "serious" or "critical"
fail a check; the others are reported.
"""

import os

import selenium_axe_python

AXE = os.path.join(os.path.dirname(selenium_axe_python.__file__), "axe-core", "axe.min.js")

RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, { resultTypes: ['violations'] })
  .then((r) => done({ version: axe.version, violations: r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) })) }))
  .catch((e) => done({ error: String(e) }));
"""


def violations(driver):
    """All of axe-core's violations on the page as it is now: (version, [violation])."""
    if not driver.execute_script("return typeof axe !== 'undefined'"):
        with open(AXE, encoding="utf-8") as f:
            driver.execute_script(f.read())
    driver.set_script_timeout(60)
    answer = driver.execute_async_script(RUN)
    if "error" in answer:
        raise RuntimeError(f"axe-core failed: {answer['error']}")
    return answer["version"], answer["violations"]


def serious(found):
    """The violations that fail a check: impact serious or critical."""
    return [v for v in found if v["impact"] in ("serious", "critical")]


def describe(found):
    return "; ".join(f"{v['impact']} {v['id']} ({v['help']}): {', '.join(v['nodes'])}" for v in found)
