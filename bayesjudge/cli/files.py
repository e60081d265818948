"""Input files and output paths of the ``bayesjudge`` command.

Ids are labels, not numbers: the id columns (:data:`bayesjudge.data.ID_COLUMNS`)
are read as strings exactly as written and never converted to missing values, so
``000`` stays ``000`` and the distinct ids ``1.1`` and ``1.10`` stay distinct
(CONTRIBUTING.md, "Conventions"). The delimiter is sniffed from the header line.
Every problem is a :class:`UsageError` with a one-line message saying the fix.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import os
import re
import stat
import tempfile
import textwrap
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from bayesjudge.data.vocabulary import ID_COLUMNS, LINE_INDEX

if TYPE_CHECKING:
    import pandas as pd


class UsageError(Exception):
    """A bad argument, output path or input file: printed as one line, exit status 2."""


# pandas' default missing-value markers, applied to the value columns only (never to ids)
NA_STRINGS = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
]
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_BLANK_LINE = re.compile(rb"\n[ \t\r\f\v]*\n")


FILES_HELP = "reading files\n" + textwrap.fill(
    "Files may be comma-, semicolon- or tab-separated: the delimiter is detected from the "
    "header line (in semicolon- or tab-separated files, decimal commas such as 0,75 are read "
    f"as 0.75). Id columns ({', '.join(ID_COLUMNS)}) are read as text, exactly as written: "
    "007 stays 007, 1.10 and 1.1 are different items, NA is an id like any other; an empty "
    "id is an error (for rank, in the columns it reads). In other columns, empty cells and "
    "NA/NaN/null are missing values, which are reported, never dropped. Errors name the "
    "line of the file (the header is line 1). "
    "A column n counts identical rows (a row with n = 5 is five rows; rows with n = 0 are "
    "dropped); a column the command does not use is named in a warning.",
    width=82, initial_indent="  ", subsequent_indent="  ",
) + "\n"


def one_line(exc: BaseException | str) -> str:
    """An exception's (or warning's) message on one line."""
    return " ".join(str(exc).split())


def read_table(path: str, what: str, ids: tuple[str, ...] | list[str] = (),
               required: tuple[str, ...] | list[str] | None = None,
               text: tuple[str, ...] | list[str] = (),
               labels: tuple[str, ...] | list[str] = ()) -> pd.DataFrame:
    """Read a user's CSV file: id columns as exact strings, delimiter sniffed.

    Parameters
    ----------
    path : str
        The file; comma-, semicolon- or tab-separated (detected from the header).
    what : str
        What the file is ("votes", "calibration", ...), for error messages.
    ids : sequence of str
        Further columns to read as ids (e.g. ``--columns`` sources mapped to ``left``).
    required : sequence of str, optional
        The id columns the command uses: only these (and ``ids``) must have a value in
        every row. Default: every id column of the file. An id column the command does not
        use may have empty cells (LLMFAO's ``annotator`` is empty on the LLM judges' rows);
        it is read as strings like the others, and the command's own check names it as
        unused.
    text : sequence of str
        Label columns to read as text (missing markers still missing): verdicts such as
        ``1`` / ``2`` / ``0`` are labels, matched to ``--outcomes`` / ``--levels`` as
        written.
    labels : sequence of str
        Values that are labels, not missing markers, in the ``text`` columns (an
        ``--outcomes N/A=tie`` makes ``N/A`` a verdict).

    Returns
    -------
    pandas.DataFrame
        Id columns (:data:`bayesjudge.data.ID_COLUMNS`) as ``str`` exactly as
        written; other columns parsed by pandas (missing markers become NaN). The
        index holds each row's line in the file (the header is line 1), named
        :data:`bayesjudge.data.LINE_INDEX`, so validation errors name file lines.

    Raises
    ------
    UsageError
        Missing, unreadable, empty or malformed file, duplicated column names, or
        an empty id.
    DataValidationError
        A repeated header line.
    """
    p = Path(path)
    where = f"{what} file {path!r}"
    if not p.exists():
        raise UsageError(f"{where} does not exist; check the path.")
    if p.is_dir():
        raise UsageError(f"{where} is a folder; pass a CSV file.")
    try:
        with open(p, encoding="utf-8-sig", newline="") as fh:
            header = next((line for line in fh if line.strip()), "")  # blank lines skipped
            first = next((line for line in fh if line.strip()), "")
            has_rows = bool(first)
    except UnicodeDecodeError:
        hint = (" Decompress it first." if p.suffix.lower() in (".gz", ".bz2", ".xz", ".zip",
                                                                ".zst") else
                " Save it as CSV in UTF-8 (e.g. Excel: 'CSV UTF-8').")
        raise UsageError(f"{where} is not UTF-8 text.{hint}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {where}: {exc.strerror or exc}.") from None
    if not header.strip():
        raise UsageError(f"{where} is empty: it needs a header line naming the columns "
                         f"and one line per row.")
    if not has_rows:
        raise UsageError(f"{where} has a header line but no rows.")
    sep = _sniff_delimiter(header)
    names = _split_header(header, sep)
    in_row = _delimiters(first)
    row_sep = _sniff_delimiter(first)
    if len(names) > 1 and row_sep != sep and in_row[sep] == 0 and in_row[row_sep] > 0:
        raise UsageError(f"{where}: its header line is {DELIMITERS[sep]}-separated but its "
                         f"first row is {DELIMITERS[row_sep]}-separated ({first.strip()[:60]!r})."
                         f" Fix: use one delimiter throughout the file.")
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise UsageError(f"{where} names column(s) {dup} more than once in its header; "
                         f"rename or drop the duplicates.")
    import pandas as pd  # (here: the command's parser and checks do without pandas)

    from bayesjudge.data.schema import check_header_rows

    extra = list(ids)
    ids = [c for c in names if c in ID_COLUMNS or c in ids]
    as_text = ids + [c for c in names if c in text and c not in ids]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            df = pd.read_csv(
                p, sep=sep, encoding="utf-8-sig", dtype={c: str for c in as_text},
                index_col=False, keep_default_na=False,
                na_values={c: [v for v in NA_STRINGS if c not in text or v.casefold() not in
                               {str(k).strip().casefold() for k in labels}]
                           for c in names if c not in ids},
            )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise UsageError(f"could not read {where} as {DELIMITERS[sep]}-separated CSV: "
                         f"{one_line(exc)}. Fix: give every line as many fields as the "
                         f"header, and quote fields that hold the delimiter.") from None
    for w in caught:
        if issubclass(w.category, pd.errors.ParserWarning):
            _check_extra_fields(p, sep, len(names), where)  # trailing delimiters only: fine
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    unnamed = [c for c, name in zip(df.columns, names) if not name.strip()
               and (df[c].fillna("").astype(str).str.strip() == "").all()]
    if unnamed:  # a header ending in the delimiter: an empty column without a name
        df = df.drop(columns=unnamed)
    if sep != ",":
        df = _decimal_commas(df, [c for c in df.columns if c not in as_text])
    df.index = _file_lines(p, sep, len(df))
    check_header_rows(df, where)
    checked = ids if required is None else [c for c in ids if c in required or c in extra]
    for col in checked:
        empty = df[col].str.strip() == ""
        if empty.any():
            lines = df.index[empty.to_numpy()].tolist()
            shown = ", ".join(map(str, lines[:5])) + (f" ... ({len(lines)} in all)"
                                                       if len(lines) > 5 else "")
            raise UsageError(f"{where}: column {col!r} is empty on line(s) {shown}; every row "
                             f"needs an id. Fill in the ids, or delete those rows.")
    return df


def _check_extra_fields(path: Path, sep: str, n_names: int, where: str) -> None:
    """Raise UsageError naming the lines with values past the header's last column.

    Rows with more fields than the header are read with the extra fields dropped (so that
    a trailing delimiter on every row does not shift the columns); an empty extra field
    is no data, a filled one would be lost.
    """
    lines = []
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep)
        next(reader, None)
        start = reader.line_num + 1
        for record in reader:
            if any(v.strip() for v in record[n_names:]):
                lines.append(start)
            start = reader.line_num + 1
    if lines:
        shown = ", ".join(map(str, lines[:5])) + (f" ... ({len(lines)} in all)"
                                                   if len(lines) > 5 else "")
        raise UsageError(f"{where} has values past its header's {n_names} columns on line(s) "
                         f"{shown}; they would be dropped. Fix: name the column in the header "
                         f"line, or remove the extra values (quote a value that holds the "
                         f"delimiter).")


def _file_lines(path: Path, sep: str, n_rows: int) -> pd.Index:
    """The file line of every data row (the header is line 1), as the table's index.

    Error messages then name rows by their line in the file
    (:data:`bayesjudge.data.LINE_INDEX`). Line i + 2 holds row i unless the file has
    blank lines (skipped by the reader) or quoted values spanning lines; then the
    lines are counted record by record.
    """
    import pandas as pd

    with open(path, "rb") as fh:
        raw = fh.read()
    if b'"' not in raw and not _BLANK_LINE.search(raw.rstrip()):
        return pd.RangeIndex(2, n_rows + 2, name=LINE_INDEX)
    starts = []
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep)
        end = 0
        for record in reader:
            if len(record) > 1 or (record and record[0].strip()):  # a blank line is no row
                starts.append(end + 1)
            end = reader.line_num
    if len(starts) != n_rows + 1:  # a reader disagreeing with pandas: name rows by position
        return pd.RangeIndex(n_rows)
    return pd.Index(starts[1:], name=LINE_INDEX)


def _delimiters(line: str) -> dict[str, int]:
    """How often each of :data:`DELIMITERS` occurs in ``line`` outside quotes."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in counts:
            counts[ch] += 1
    return counts


def _sniff_delimiter(header: str) -> str:
    """The most frequent of comma, semicolon and tab outside quotes (comma if none)."""
    counts = _delimiters(header)
    best = max(counts, key=counts.get)  # ties go to the comma (first key)
    return best if counts[best] else ","


def _split_header(header: str, sep: str) -> list[str]:
    return next(csv.reader([header.rstrip("\r\n")], delimiter=sep))


def _decimal_commas(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Semicolon/tab files: read text columns with decimal commas (0,75) as numbers."""
    import pandas as pd

    for col in columns:
        if not pd.api.types.is_string_dtype(df[col]):  # "str" (pandas 3) or object
            continue
        values = df[col].dropna().astype(str)
        comma = values.str.match(_DECIMAL_COMMA)
        if comma.any() and (comma | values.str.match(_INTEGER)).all():
            df[col] = pd.to_numeric(df[col].str.replace(",", ".", regex=False))
    return df


def write_csv(table: pd.DataFrame, path: str, index: bool = False) -> None:
    """``table.to_csv(path)``; a failed write (a full disk) names ``path`` in its error."""
    try:
        table.to_csv(path, index=index)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), path) from None


def wrote(*paths: str | None) -> str:
    """The closing line naming the files a command wrote (``None``: not asked for)."""
    files = [p for p in paths if p]
    return "wrote " + (files[0] if len(files) == 1 else
                       ", ".join(files[:-1]) + " and " + files[-1])


def check_output_file(path: str, flag: str, inputs: tuple[str, ...] = ()) -> None:
    """Raise UsageError unless ``path`` can be written as a file (before any work).

    Its folder must exist and be writable, ``path`` must not be a folder, and it
    must not be one of the ``inputs`` (which would be overwritten).
    """
    if not path.strip():  # --out "$UNSET": no file would be written, and nothing said
        raise UsageError(f"{flag} is empty ({path!r}); give a file name, e.g. {flag} "
                         f"table.csv, or leave {flag} out.")
    p = Path(path)
    if p.is_dir() or path.endswith(("/", os.sep)):
        raise UsageError(f"{flag} {path!r} is a folder; give a file name, e.g. "
                         f"{flag} {p / 'table.csv'}.")
    folder = p.parent
    if not folder.exists():
        raise UsageError(f"{flag} {path!r}: the folder {str(folder)!r} does not exist; "
                         f"create it first (mkdir -p {folder}) or choose another path.")
    if not folder.is_dir():
        raise UsageError(f"{flag} {path!r}: {str(folder)!r} is a file, not a folder.")
    if not os.access(folder, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{flag} {path!r} is not writable; choose another path.")
    for source in inputs:
        if Path(source).exists() and p.exists() and p.samefile(source):
            raise UsageError(f"{flag} {path!r} is an input file and would be overwritten; "
                             f"choose another output path.")
    # os.access trusts permissions, which root (and /proc, read-only mounts) ignore:
    # open it for appending now (nothing written), and remove it again if it is new
    existed = p.exists()
    try:
        if existed and stat.S_ISFIFO(p.stat().st_mode):
            # a named pipe blocks an open until some process reads it: probe without waiting
            os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))
        else:
            with open(p, "a"):
                pass
    except OSError as exc:
        why = ("a named pipe that no process reads" if exc.errno == errno.ENXIO else
               exc.strerror)
        raise UsageError(f"{flag} {path!r} cannot be written ({why}); choose "
                         f"another path.") from None
    if not existed:
        p.unlink(missing_ok=True)


def check_distinct_outputs(paths: dict[str, str]) -> None:
    """Raise UsageError when two output flags name the same file, however spelt
    (``./o.csv`` and ``o.csv``; a symbolic link and its target)."""
    seen: dict[str, str] = {}
    for flag, path in paths.items():
        if path is None:
            continue
        real = os.path.realpath(path)
        if real in seen:
            raise UsageError(f"{seen[real]} and {flag} name the same file ({path!r}); the "
                             f"second would overwrite the first. Fix: give two different "
                             f"paths.")
        seen[real] = flag


def check_output_dir(path: str, flag: str, files: tuple[str, ...] = ()) -> None:
    """Raise UsageError unless ``path`` is, or can be created as, a writable folder
    in which none of ``files`` is a folder."""
    if not path.strip():  # Path("") is the working folder: not what an unset variable meant
        raise UsageError(f"{flag} is empty ({path!r}); give a folder name, e.g. {flag} "
                         f"demo-output.")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{flag} {path!r} is a file, not a folder; give a folder name "
                         f"(it is created if missing).")
    existing = p
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{flag} {path!r} cannot be created: {str(existing)!r} is a file.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path!r} is not writable; choose another folder.")
    # os.access trusts permissions, which root (and /proc, read-only mounts) ignore: make
    # the missing folders, or a file in the existing one, now (and remove them again)
    made = [q for q in (p, *p.parents) if not q.exists()]
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=p):
            pass
    except OSError as exc:
        raise UsageError(f"{flag} {path!r} cannot be written ({exc.strerror}); choose "
                         f"another folder.") from None
    finally:
        for q in made:  # deepest first
            with contextlib.suppress(OSError):
                q.rmdir()
    for name in files:
        if (p / name).is_dir():
            raise UsageError(f"{flag} {path!r} holds a folder {name!r} where the output file "
                             f"{name} goes; remove it or choose another folder.")
