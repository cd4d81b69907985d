"""scripts/split_cache_pairs.py: each pair lands in dev or test by a hash, never both, and a second run adds
nothing; with ``--by-stored`` every pair built on one stored question lands in one split."""

from __future__ import annotations

import json

from tests.support.scripts import load_script

split = load_script("split_cache_pairs")


def rows_of(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def test_by_stored_keeps_every_pair_of_one_stored_question_in_one_split(tmp_path, capsys):
    src = tmp_path / "src.jsonl"
    pairs = [
        {"a": f"stored question {i}", "b": f"new wording {j} of {i}", "same_answer": j % 2 == 0}
        for i in range(40)
        for j in range(3)
    ]
    src.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    out = tmp_path / "out"
    assert split.main(["--out-dir", str(out), "--by-stored", str(src)]) == 0
    dev, test = rows_of(out / "dev.jsonl"), rows_of(out / "test.jsonl")
    assert len(dev) + len(test) == len(pairs) and dev and test
    assert not {r["a"] for r in dev} & {r["a"] for r in test}  # no stored question on both sides
    assert split.main(["--by-stored", "--out-dir", str(out), str(src)]) == 0  # again: nothing added
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["added"] == {"dev": 0, "test": 0}
    # by the pair (the default), the same stored question does land on both sides for some
    plain = tmp_path / "plain"
    assert split.main(["--out-dir", str(plain), str(src)]) == 0
    assert {r["a"] for r in rows_of(plain / "dev.jsonl")} & {r["a"] for r in rows_of(plain / "test.jsonl")}


def test_by_stored_groups_a_writers_scenario_when_it_names_one(tmp_path):
    src = tmp_path / "src.jsonl"
    pairs = [
        {
            "a": [{"role": "user", "content": f"variant {j} of {i}"}],
            "b": f"q{j}",
            "same_answer": True,
            "scenario": f"s-{i}",
        }
        for i in range(30)
        for j in range(4)
    ]
    src.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    assert split.main(["--out-dir", str(tmp_path / "o"), "--by-stored", str(src)]) == 0
    dev, test = rows_of(tmp_path / "o" / "dev.jsonl"), rows_of(tmp_path / "o" / "test.jsonl")
    assert dev and test and not {r["scenario"] for r in dev} & {r["scenario"] for r in test}


def test_the_test_share_sets_how_much_goes_to_test(tmp_path):
    src = tmp_path / "src.jsonl"
    src.write_text("".join(json.dumps({"a": f"q{i}", "b": f"r{i}", "same_answer": True}) + "\n" for i in range(3000)))
    assert split.main(["--out-dir", str(tmp_path / "o"), "--test-share", "0.33", str(src)]) == 0
    share = len(rows_of(tmp_path / "o" / "test.jsonl")) / 3000
    assert abs(share - 84 / 256) < 4 * (0.33 * 0.67 / 3000) ** 0.5  # 84 of 256 hash values; 4 binomial sd
    assert split.main(["--test-share", "1.5", str(src)]) == 2
