"""Foreign exceptions are mapped into snapglyph's tree at the boundary (issue 9)."""

import pytest

import snapglyph
from snapglyph import InputError, InternalError, Message, Part, SnapglyphError, SourceStore, StoreError
from snapglyph.providers import overflow


def test_overflow_number_too_long_for_int_is_no_number():
    digits = "9" * 5000  # int() refuses over 4300 digits with a ValueError
    body = {"error": {"message": f"prompt is too long: {digits} tokens > 200000 maximum"}}
    r = overflow.detect(400, body)
    assert r is not None and r.prompt_tokens is None and r.limit == 200000


def test_silent_truncation_bad_arguments_are_input_errors():
    with pytest.raises(InputError):
        overflow.check_silent_truncation(-1, 10)


def test_store_folder_blocked_by_a_file_is_a_store_error(tmp_path):
    (tmp_path / "f").write_text("x")
    store = SourceStore()
    store.put([Message(0, "user", [Part("text", text="hi")])])
    with pytest.raises(StoreError):
        store.save(tmp_path / "f" / "store.jsonl")


def test_compact_faulty_output_is_an_internal_error(monkeypatch):
    from snapglyph.providers import validation
    monkeypatch.setattr(validation, "validate", lambda req, dialect, profile=None: [validation.Fault(0, "boom")])
    msgs = [Message(0, "user", [Part("text", text="hi")])]
    with pytest.raises(InternalError) as ei:
        snapglyph.compact(msgs, profile="claude", budget=100_000)
    assert isinstance(ei.value, SnapglyphError) and not isinstance(ei.value, InputError)
    assert ei.value.faults[0].text == "boom"
