"""benchmarks/check_set.py on a set of its own: a case that relies on something its knowledge base does not hold
is an error, and a sound set has none."""

from pathlib import Path

from benchmarks.check_set import check_set

PAGES = {
    "parking.md": "---\nid: parking\ntitle: Parking\n---\n# Parking\n\n## Permits\n\n"
                  "Staff permits cost EUR 40 a month. Visitors park free for two hours.\n",
    "payroll.md": "---\nid: payroll\ntitle: Payroll\naudience: [finance]\n---\n# Payroll\n\n## Dates\n\n"
                  "Salaries are paid on the 25th.\n",
}
SOUND = """
- id: s-1
  question: "how much is a staff parking permit?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["parking#Permits"]
  must_include: [["40", "forty"]]
- id: s-2
  question: "when do salaries land?"
  asker: {roles: [everyone, finance]}
  expect: answer
  support: ["payroll#Dates"]
  must_include: ["25th"]
- id: s-3
  question: "is there a bike shed?"
  asker: {roles: [everyone]}
  expect: not_in_corpus
- id: s-4
  question: "what day is payday?"
  asker: {roles: [everyone]}
  expect: not_permitted
  answer_doc: payroll
"""
GAPS = '- {topic: "Bikes", keywords: [bike shed, cycle storage], owner: "#facilities"}\n'


def write_set(root: Path, cases: str, *, probes: str = "s-3: [bike shed]\n") -> Path:
    (root / "kb").mkdir(parents=True)
    for name, text in PAGES.items():
        (root / "kb" / name).write_text(text, encoding="utf-8")
    (root / "cases.yaml").write_text(cases, encoding="utf-8")
    (root / "owners.yml").write_text(GAPS, encoding="utf-8")
    (root / "absent_terms.yml").write_text(probes, encoding="utf-8")
    return root


def test_a_sound_set_has_no_errors(tmp_path: Path) -> None:
    sound = SOUND.replace('expect: not_in_corpus\n', 'expect: not_in_corpus\n  owner: "#facilities"\n')

    checked = check_set(write_set(tmp_path, sound))

    assert checked.errors == ()
    assert checked.summary.startswith("2 documents, 4 cases")


def test_each_thing_a_case_silently_relies_on_is_an_error(tmp_path: Path) -> None:
    broken = (SOUND.replace('must_include: [["40", "forty"]]', 'must_include: ["30"]')
              .replace('asker: {roles: [everyone, finance]}', 'asker: {roles: [everyone]}')
              .replace("answer_doc: payroll", "answer_doc: parking"))
    broken += ('- id: s-5\n  question: "where is the bike shed?"\n  asker: {roles: [everyone]}\n'
               '  expect: answer\n  support: ["parking#Bikes"]\n')

    errors = check_set(write_set(tmp_path, broken, probes="s-3: [bike shed, two hours]\n")).errors

    assert len(errors) == 7, errors
    assert any("s-1: must_include ['30'] not in the text of parking#Permits" in e for e in errors)
    assert any("s-2: support payroll#Dates is in a document the asker ['everyone'] may not see" in e
               for e in errors)
    assert any("s-4: answer_doc 'parking' is visible" in e for e in errors)
    assert any("s-5: support parking#Bikes is not a section of the kb" in e for e in errors)
    assert any("s-5: the question matches the known gap 'Bikes'" in e for e in errors)
    assert any("s-3: matches the known gap 'Bikes' but names no owner" in e for e in errors)
    assert any("s-3: probe term 'two hours' occurs in the kb" in e for e in errors)
