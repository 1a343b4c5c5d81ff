"""Filling a page's form in one round trip, for the browser tests that ask many questions
through the pages' controls (tests/web/test_web_advisor_parity.py, test_web_layout.py)."""

from __future__ import annotations

# Sets each control as Playwright's fill and select_option do, in one round trip for the
# whole form (Playwright's actions, one per field, cost about 0.35 CPU-s a question, 6 of the
# file's 20 CPU-s per language, measured with every descendant process's CPU, 2026-12-07,
# shared machine): the control must exist, be shown and enabled (a select: offer the value,
# by value or label), gets its value and the events a person's input fires ("input", then
# "change" as the focus leaves it), in the order a person fills them (the workload first:
# it changes the units offered). What the page then holds is read back and compared.
FILL = """([form, steps, unfold]) => {
  if (unfold) document.querySelectorAll(`${form} details`).forEach(d => d.open = true);
  const wrong = [];
  for (const [name, value] of steps) {
    const el = document.getElementById('f-' + name);
    if (!el) { wrong.push(`no control #f-${name}`); continue; }
    if (!el.checkVisibility() || el.disabled || el.readOnly) {
      wrong.push(`#f-${name} is not there to fill`); continue;
    }
    if (el.tagName === 'SELECT') {
      const opt = [...el.options].find(o => o.value === value || o.label === value);
      if (!opt) { wrong.push(`#f-${name} offers no ${value}`); continue; }
      el.value = opt.value;
    } else {
      el.focus(); el.value = value;
    }
    el.dispatchEvent(new Event('input', {bubbles: true}));
    el.dispatchEvent(new Event('change', {bubbles: true}));
    if (el.tagName !== 'SELECT' && el.value !== value) wrong.push(`#f-${name} took ${el.value}`);
  }
  return wrong;
}"""


def fill_form(tab, steps: list[tuple[str, str]], form: str, unfold: bool = False) -> list[str]:
    """Set each ``#f-<name>`` control to its value, in order (``unfold``: every ``<details>``
    of ``form`` opened first, as a person opens "More settings"); what could not be set, if
    anything."""
    return tab.evaluate(FILL, [form, steps, unfold])
