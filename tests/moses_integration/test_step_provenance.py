"""step_provenance: a step is reused only when its record says it was made from the same files (by
content), the same settings, and its results are the files it wrote."""

import json

from moses_integration.step_provenance import Step, check, changed, damaged, fingerprint, forget, record


def made(tmp_path, **settings):
    model, result = tmp_path / "model.pt", tmp_path / "out" / "scored.gz"
    result.parent.mkdir(exist_ok=True)
    return Step("the scored list", tmp_path / "steps" / "score.json", [result],
                {"model": fingerprint(model)}, {"per_word": True, **settings})


def finished(tmp_path):
    (tmp_path / "model.pt").write_bytes(b"weights v1")
    step = made(tmp_path)
    step.results[0].write_bytes(b"scores")
    record(step)
    return step


def test_a_step_made_from_the_same_is_reused(tmp_path):
    finished(tmp_path)
    assert check(made(tmp_path)) is None


def test_a_model_rewritten_in_place_is_another_input(tmp_path):
    finished(tmp_path)
    (tmp_path / "model.pt").write_bytes(b"weights v2")  # same size, same path
    assert check(made(tmp_path)) == "its model changed since the scored list was made"


def test_a_setting_changed_is_named(tmp_path):
    finished(tmp_path)
    assert changed(made(tmp_path, seed=2)) == "its setting seed changed since the scored list was made"


def test_a_result_without_a_record_or_with_a_broken_one_is_not_reused(tmp_path):
    step = finished(tmp_path)
    step.record_path.write_text("{not json")
    assert check(step).startswith("no readable record of what the scored list was made from")
    step.record_path.unlink()
    assert check(step).startswith("no readable record")


def test_a_damaged_or_missing_result_is_not_reused(tmp_path):
    step = finished(tmp_path)
    step.results[0].write_bytes(b"scorez")
    assert check(step) == f"{step.results[0]} is not the file the scored list wrote (changed or damaged since)"
    step.results[0].unlink()
    assert check(step) == f"{step.results[0]} is missing"


def test_forget_removes_the_record_then_the_results(tmp_path):
    step = finished(tmp_path)
    forget(step)
    assert not step.record_path.exists() and not step.results[0].exists()


def test_a_record_made_as_a_run_begins_checks_only_what_it_names(tmp_path):
    """A tuning run is recorded as it begins, before its result exists."""
    (tmp_path / "model.pt").write_bytes(b"weights v1")
    step = made(tmp_path)
    record(Step(step.name, step.record_path, [], step.inputs, step.settings))
    step.results[0].write_bytes(b"tuned")
    assert damaged(step, only_recorded=True) is None and damaged(step) is not None
    assert json.loads(step.record_path.read_text())["results"] == {}
