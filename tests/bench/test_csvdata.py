"""Tests for the CSV loader (skfbnn.bench.csvdata): what it refuses, naming the column and
the lines, and a property test (hypothesis) over tables of numbers, text, blanks and
repeated names."""

from __future__ import annotations

import csv
import io
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skfbnn.bench.csvdata import MISSING, CSVTask, load_csv


def _write(tmp_path, text, name="d.csv", bom=False):
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


NUMBERS = "a,b,y\n" + "".join(f"{i},{i % 3},{2 * i}\n" for i in range(8))


@pytest.mark.parametrize("cell", ["", "nan", "NaN", "inf", "-inf", "NA", "?"])
def test_a_missing_or_non_finite_cell_is_refused_not_one_hot_encoded(tmp_path, cell):
    """A NaN in a numeric column made it a text column: 40 rows became 40 x 80."""
    lines = NUMBERS.splitlines()
    lines[3] = f"{cell},1,4" if cell else ",1,4"
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"numeric column 'a' has missing or non-finite "
                                         r"cells .* on lines 4;"):
        load_csv(path, "y")


def test_the_first_offending_lines_are_named(tmp_path):
    lines = NUMBERS.splitlines()
    for i in (2, 3, 5, 6, 7, 8, 9):
        lines[i - 1] = f"{i},,{i}"
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"column 'b' .* lines 2, 3, 5, 6, 7 and 2 more"):
        load_csv(path, "y")


def test_a_nan_in_the_target_is_refused(tmp_path):
    """A NaN in a 0/1 target made a 3-class problem with a class 'nan'."""
    path = _write(tmp_path, "a,y\n1,0\n2,1\n3,nan\n4,1\n")
    with pytest.raises(ValueError, match="numeric target 'y' has missing .* lines 4"):
        load_csv(path, "y")
    path = _write(tmp_path, "a,y\n1,red\n2,\n3,blue\n")
    with pytest.raises(ValueError, match="target 'y' has blank cells on lines 3"):
        load_csv(path, "y")


def test_duplicate_and_empty_column_names_are_refused(tmp_path):
    """``a,a,y`` fitted one feature; ``y,b,y`` dropped the first ``y``."""
    for header, match in [("a,a,y", r"'a' at columns \[1, 2\]"),
                          ("y,b,y", r"'y' at columns \[1, 3\]"),
                          ("a,,y", r"column\(s\) \[2\] no name")]:
        path = _write(tmp_path, f"{header}\n1,2,3\n4,5,6\n")
        with pytest.raises(ValueError, match=match):
            load_csv(path, "y")


def test_a_byte_order_mark_is_stripped(tmp_path):
    path = _write(tmp_path, "size,price\n1,10\n2,20\n3,30\n", bom=True)
    X, y, names = load_csv(path, "size")
    assert names == ["price"] and y.tolist() == [1.0, 2.0, 3.0]


def test_blank_rows_are_skipped_and_line_numbers_kept(tmp_path):
    X, y, _ = load_csv(_write(tmp_path, "a,y\n1,2\n\n,\n3,4\n"), "y")
    assert X.tolist() == [[1.0], [3.0]] and y.tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="lines 5;"):
        load_csv(_write(tmp_path, "a,y\n1,2\n\n,\n3,\n"), "y")


def test_too_few_rows_and_wrong_lengths(tmp_path):
    with pytest.raises(ValueError, match="at least two rows; it has 1"):
        load_csv(_write(tmp_path, "a,y\n1,2\n"), "y")
    with pytest.raises(ValueError, match=r"lines 3 do not have 2 fields"):
        load_csv(_write(tmp_path, "a,y\n1,2\n3\n4,5\n"), "y")


def test_regression_on_text_suggests_the_option_that_works(tmp_path):
    path = _write(tmp_path, "a,y\n1,red\n2,blue\n3,red\n")
    with pytest.raises(ValueError, match="--target-kind classification") as info:
        CSVTask(path, "y", ["sgld"])
    assert "--task classification" not in str(info.value)


def test_regression_folds_must_fit_the_rows(tmp_path):
    path = _write(tmp_path, "a,y\n1,2\n3,4\n")
    with pytest.raises(ValueError, match="has 2 rows: 5-fold"):
        CSVTask(path, "y", ["sgld"])


# ----------------------------------------------------------------- property
NAMES = st.sampled_from(["a", "b", "c", "y", "y"])
CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32).map(repr),
    st.integers(-5, 5).map(str),
    st.sampled_from(["", " ", "red", "blue", "NA", "nan", "x,y", 'q"uote']),
)


@st.composite
def tables(draw):
    names = draw(st.lists(NAMES, min_size=2, max_size=4))
    rows = draw(st.lists(st.lists(CELLS, min_size=len(names), max_size=len(names)),
                         min_size=0, max_size=6))
    return names, rows


def _expected_column(values: list[str]):
    """What a column should load as: floats, strings, or None (to be refused)."""
    numbers = []
    for v in values:
        try:
            numbers.append(float(v))
        except ValueError:
            numbers.append(None)
    if all(x is not None or v.lower() in MISSING for v, x in zip(values, numbers,
                                                                    strict=True)):
        return None if any(x is None or not math.isfinite(x) for x in numbers) else numbers
    return None if any(not v for v in values) else values


def _check_table(names, rows, bom):
    buffer = io.StringIO()
    csv.writer(buffer).writerows([names, *rows])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + buffer.getvalue().encode())
        body = [[c.strip() for c in r] for r in rows if any(c.strip() for c in r)]
        columns = {n: [r[j] for r in body] for j, n in enumerate(names)}
        readable = (len(set(names)) == len(names) and "y" in names and len(body) >= 2
                    and all(_expected_column(v) is not None for v in columns.values()))
        try:
            X, y, feature_names = load_csv(path, "y")
        except ValueError as exc:
            message = str(exc)
            assert "t.csv" in message, message  # names the file
            assert not readable, f"a readable table was refused: {message}"
            return
    assert readable  # loaded: then the table was well-formed and every cell readable
    target = _expected_column(columns["y"])
    np.testing.assert_array_equal(y, np.array(target))
    position = 0
    for name in names:
        if name == "y":
            continue
        want = _expected_column(columns[name])
        assert want is not None, name
        if isinstance(want[0], float):
            assert feature_names[position] == name
            np.testing.assert_array_equal(X[:, position], want)
            position += 1
        else:
            categories = sorted(set(want))
            block = X[:, position:position + len(categories)]
            assert feature_names[position:position + len(categories)] == [
                f"{name}={c}" for c in categories]
            np.testing.assert_array_equal(np.array(categories)[block.argmax(axis=1)], want)
            assert np.all(block.sum(axis=1) == 1)
            position += len(categories)
    assert position == X.shape[1] == len(feature_names)


@settings(max_examples=50, deadline=None)
@given(table=tables(), bom=st.booleans())
def test_any_table_round_trips_or_is_refused_with_a_message(table, bom):
    _check_table(*table, bom)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(table=tables(), bom=st.booleans())
def test_any_table_round_trips_or_is_refused_with_a_message_long(table, bom):
    _check_table(*table, bom)
