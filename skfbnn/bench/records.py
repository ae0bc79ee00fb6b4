"""Record files: tidy CSV files of benchmark records that survive an interrupted run.

A run appends each finished cell's records to a CSV file (its side rows, e.g. the
reliability bins of ``x.bins.csv``, first, the main records last). A run killed at any
byte leaves at most a partial last line, which :func:`repair_record_file` cuts off
(with a :class:`RecordFileWarning` naming the file) before anything is appended, and
which :func:`read_records` drops the same way; a line with the wrong number of fields
anywhere else is corruption, reported with the file and the line.
"""

from __future__ import annotations

import csv
import io
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

__all__ = ["RecordFileError", "RecordFileWarning", "read_records", "append_records",
           "append_record", "repair_record_file", "drop_records", "detail_path",
           "split_record_files", "DETAIL_KINDS"]


class RecordFileError(ValueError):
    """A file is not a readable record file (missing, a folder, not CSV, corrupt, or
    holding records of other columns); the message names the file."""


class RecordFileWarning(UserWarning):
    """A record file had a partial last line (a run was interrupted while writing it)."""


def _check_file(path: Path) -> None:
    if not path.exists():
        raise RecordFileError(f"{str(path)!r}: no such record file.")
    if not path.is_file():
        raise RecordFileError(f"{str(path)!r} is not a file (a folder?); pass record files.")


def _text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RecordFileError(f"{str(path)!r} is not a UTF-8 CSV file of records "
                         f"(byte {exc.start} does not decode).") from None


def _partial_tail(text: str) -> tuple[str, str]:
    """``text`` up to its last newline, and what follows it (a line cut short)."""
    cut = text.rfind("\n") + 1
    return text[:cut], text[cut:]


def _warn_partial(path: Path, tail: str) -> None:
    warnings.warn(f"{str(path)!r}: dropped a partial last line of {len(tail)} characters "
                  "(a run was interrupted while writing it); its cell runs again when the "
                  "run is resumed.",
                  RecordFileWarning, stacklevel=3)


def repair_record_file(path: Path) -> bool:
    """Cut a partial last line (no final newline) off the file ``path``; True if it had one.

    Examples
    --------
    >>> import tempfile, warnings
    >>> path = Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = path.write_text("a,b\\n1,2\\n3,")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     repair_record_file(path)
    True
    >>> path.read_text(), caught[0].category.__name__
    ('a,b\\n1,2\\n', 'RecordFileWarning')
    """
    path = Path(path)
    if not path.is_file():
        return False
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return False
    keep = data.rfind(b"\n") + 1
    with path.open("r+b") as fh:
        fh.truncate(keep)
    _warn_partial(path, data[keep:].decode("utf-8", "replace"))
    return True


def _rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and ``(line, fields)`` rows of a record file; a partial last line dropped."""
    _check_file(path)
    text, tail = _partial_tail(_text(path))
    if tail:
        _warn_partial(path, tail)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, [])
        rows = [(reader.line_num, row) for row in reader if row]
    except csv.Error as exc:
        raise RecordFileError(f"{str(path)!r}: not a CSV file of records ({exc}).") from None
    if not header:
        return [], []
    if len(set(header)) != len(header):
        twice = sorted({h for h in header if header.count(h) > 1})
        raise RecordFileError(f"{str(path)!r}: the header names the columns {twice} twice; "
                         "not a record file.")
    for line, row in rows:
        if len(row) != len(header):
            raise RecordFileError(f"{str(path)!r}: line {line} has {len(row)} fields, the header "
                             f"{len(header)}; the file is corrupt (edit or remove the line).")
    return header, rows


def read_records(paths: Sequence[Path]) -> list[dict]:
    """Records from CSV files, numbers parsed as floats.

    A partial last line (a run killed while writing it) is dropped with a
    :class:`RecordFileWarning`; a missing file, a folder, a file that is not UTF-8
    CSV or that has a line with another number of fields than its header raises
    ``ValueError`` naming the file (and the line).
    """
    records = []
    for path in map(Path, paths):
        header, rows = _rows(path)
        records += [{k: _number(v) for k, v in zip(header, row, strict=True)}
                    for _, row in rows]
    return records


def _number(value: str):
    try:
        return float(value)
    except ValueError:
        return value


def drop_records(path: Path, drop: Callable[[dict], bool]) -> int:
    """Rewrite ``path`` without the records for which ``drop(record)`` holds (records as
    :func:`read_records` gives them); the file is replaced in one step. Returns how many
    were dropped."""
    path = Path(path)
    header, rows = _rows(path)
    keep = [row for _, row in rows
            if not drop({k: _number(v) for k, v in zip(header, row, strict=True)})]
    if len(keep) == len(rows):
        return 0
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(keep)
    os.replace(tmp, path)
    return len(rows) - len(keep)


def append_records(path: Path, records: Sequence[dict]) -> None:
    """Append records that share one set of columns to a CSV file.

    A new file gets a header; an existing file's header must name the same
    columns (a file holds the records of one task), and the rows are written in
    its order, in one write.
    """
    if not records:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = list(records[0])
    header: list[str] = []
    if path.exists() and path.stat().st_size:
        repair_record_file(path)
        with path.open(newline="") as fh:
            header = next(csv.reader(fh), [])
        if header and set(header) != set(fields):
            raise RecordFileError(
                f"{str(path)!r} holds records with the columns {header}; these have "
                f"{fields}. Write each task's records to a file of their own (--out).")
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=header or fields)
    if not header:
        writer.writeheader()
    for record in records:
        if set(record) != set(fields):
            raise RecordFileError(f"every record must have the columns {fields}. Got "
                             f"{list(record)}.")
        writer.writerow(record)
    with path.open("a" if header else "w", newline="") as fh:
        fh.write(buffer.getvalue())


def append_record(path: Path, record: dict) -> None:
    """Append one record to a CSV file (header written on creation)."""
    append_records(path, [record])


DETAIL_KINDS = ("bins", "curves")
"""Side files next to a record file ``x.csv``: ``x.bins.csv`` (reliability and entropy
histograms of the classification task) and ``x.curves.csv`` (the bandit's regret curves)."""


def detail_path(path: Path, kind: str) -> Path:
    """The side file of kind ``kind`` (one of :data:`DETAIL_KINDS`) next to record file ``path``.

    Examples
    --------
    >>> detail_path(Path("results/ood.csv"), "bins").as_posix()
    'results/ood.bins.csv'
    """
    if kind not in DETAIL_KINDS:
        raise ValueError(f"kind must be one of {DETAIL_KINDS}. Got {kind!r}.")
    path = Path(path)
    return path.with_name(f"{path.stem}.{kind}.csv")


def split_record_files(paths: Iterable[Path]) -> tuple[list[Path], dict[str, list[Path]]]:
    """Record files and the side files (given, or found next to the record files).

    Examples
    --------
    >>> records, details = split_record_files([Path("a.csv"), Path("a.bins.csv")])
    >>> [p.name for p in records], {k: [p.name for p in v] for k, v in details.items()}
    (['a.csv'], {'bins': ['a.bins.csv'], 'curves': []})
    """
    records: list[Path] = []
    details: dict[str, list[Path]] = {kind: [] for kind in DETAIL_KINDS}
    for path in map(Path, paths):
        kind = next((k for k in DETAIL_KINDS if path.name.endswith(f".{k}.csv")), None)
        if kind is not None:
            if path not in details[kind]:
                details[kind].append(path)
            continue
        records.append(path)
        for k in DETAIL_KINDS:
            side = detail_path(path, k)
            if side.is_file() and side not in details[k]:
                details[k].append(side)
    return records, details
