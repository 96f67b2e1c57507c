"""Tests for rescorer.io.atomic_output.AtomicOutput: all or nothing at the target, gzip by name."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from rescorer.errors import RescorerError
from rescorer.io.atomic_output import AtomicOutput

LINES = [b"a ||| b ||| 0.5 0.1", b"caf\xe9 ||| c ||| 1 1", b""]
CONTENT = b"a ||| b ||| 0.5 0.1\ncaf\xe9 ||| c ||| 1 1\n\n"


def write(path: Path, lines: list[bytes], **kwargs: object) -> AtomicOutput:
    with AtomicOutput(path, **kwargs) as out:
        for line in lines:
            out.write_line(line)
    return out


def test_plain_output(tmp_path: Path) -> None:
    out = write(tmp_path / "table", LINES)
    assert (tmp_path / "table").read_bytes() == CONTENT
    assert out.lines_written == 3
    assert os.listdir(tmp_path) == ["table"]


def test_gz_output_is_real_gzip(tmp_path: Path, gzip_backend: str) -> None:
    write(tmp_path / "table.gz", LINES)
    data = (tmp_path / "table.gz").read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert gzip.decompress(data) == CONTENT
    assert os.listdir(tmp_path) == ["table.gz"]


def test_gz_output_is_reproducible(tmp_path: Path, gzip_backend: str) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    write(tmp_path / "one" / "table.gz", LINES)
    write(tmp_path / "two" / "table.gz", LINES)
    assert (tmp_path / "one" / "table.gz").read_bytes() == (tmp_path / "two" / "table.gz").read_bytes()


def test_large_output_spans_buffers(tmp_path: Path, gzip_backend: str) -> None:
    lines = [b"source %d ||| target ||| 0.5" % i for i in range(100_000)]  # ~2.8 MB, several flushes
    out = write(tmp_path / "table.gz", lines)
    assert out.lines_written == len(lines)
    assert gzip.decompress((tmp_path / "table.gz").read_bytes()) == b"".join(line + b"\n" for line in lines)


def test_write_adds_bytes_as_they_are(tmp_path: Path) -> None:
    with AtomicOutput(tmp_path / "table") as out:
        out.write(b"no newline")
        out.write_lines([b"x", b"y"])
    assert (tmp_path / "table").read_bytes() == b"no newlinex\ny\n"
    assert out.lines_written == 2


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt], ids=["RuntimeError", "KeyboardInterrupt"])
@pytest.mark.parametrize("name", ["table", "table.gz"])
def test_exception_leaves_nothing(tmp_path: Path, name: str, error: type[BaseException]) -> None:
    with pytest.raises(error):
        with AtomicOutput(tmp_path / name) as out:
            out.write_line(b"a ||| b ||| 1")
            assert len(os.listdir(tmp_path)) == 1  # the temporary file, beside the target
            assert os.listdir(tmp_path)[0].startswith(f".{name}.tmp-")
            raise error()
    assert os.listdir(tmp_path) == []


def test_exception_keeps_an_existing_target(tmp_path: Path) -> None:
    target = tmp_path / "table"
    target.write_bytes(b"old\n")
    with pytest.raises(RuntimeError):
        with AtomicOutput(target, force=True) as out:
            out.write_line(b"new")
            raise RuntimeError()
    assert target.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["table"]


def test_refuses_existing_target_without_force(tmp_path: Path) -> None:
    target = tmp_path / "table.gz"
    target.write_bytes(b"old\n")
    with pytest.raises(RescorerError, match=f"^{target}: the output exists"):
        AtomicOutput(target)
    assert target.read_bytes() == b"old\n"
    write(target, LINES, force=True)
    assert gzip.decompress(target.read_bytes()) == CONTENT


def same_path_spellings(tmp_path: Path) -> list[tuple[Path, Path]]:
    src = tmp_path / "in.gz"
    (tmp_path / "sub").mkdir()
    os.symlink(src, tmp_path / "link.gz")
    os.link(src, tmp_path / "hard.gz")
    return [(src, src), (tmp_path / "sub" / ".." / "in.gz", src), (tmp_path / "link.gz", src),
            (tmp_path / "hard.gz", src)]


@pytest.mark.parametrize("case", range(4), ids=["same", "dotdot", "symlink", "hardlink"])
def test_refuses_input_as_output_even_with_force(tmp_path: Path, case: int) -> None:
    (tmp_path / "in.gz").write_bytes(b"precious\n")
    target, input_path = same_path_spellings(tmp_path)[case]
    with pytest.raises(RescorerError, match="the output is the input phrase table"):
        AtomicOutput(target, force=True, input_path=input_path)
    assert (tmp_path / "in.gz").read_bytes() == b"precious\n"


def test_different_input_is_fine(tmp_path: Path) -> None:
    (tmp_path / "in.gz").write_bytes(b"x\n")
    write(tmp_path / "out.gz", LINES, input_path=tmp_path / "in.gz")
    assert gzip.decompress((tmp_path / "out.gz").read_bytes()) == CONTENT


def test_refuses_missing_directory_and_directory_target(tmp_path: Path) -> None:
    with pytest.raises(RescorerError, match="no directory"):
        AtomicOutput(tmp_path / "missing" / "table.gz")
    with pytest.raises(RescorerError, match="is a directory"):
        AtomicOutput(tmp_path, force=True)


def test_permissions_follow_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write(tmp_path / "table", LINES)
    finally:
        os.umask(old)
    assert (tmp_path / "table").stat().st_mode & 0o777 == 0o640


def test_stdout(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    out = write(Path("-"), LINES)
    assert capsysbinary.readouterr().out == CONTENT
    assert out.lines_written == 3


def test_write_outside_with_is_an_error(tmp_path: Path) -> None:
    out = AtomicOutput(tmp_path / "table")
    with pytest.raises(RescorerError, match="outside the `with` block"):
        out.write_line(b"x")



class RecordedWrites:
    """A file object that records the size of every write that reaches it."""

    def __init__(self, file):
        self.file, self.sizes = file, []

    def write(self, data: bytes) -> int:
        self.sizes.append(len(data))
        return self.file.write(data)

    def __getattr__(self, name):
        return getattr(self.file, name)


def test_joined_lines_are_flushed_after_the_same_lines_as_one_by_one(tmp_path: Path, monkeypatch) -> None:
    """A gzip writer's bytes may depend on how its input is cut: the cuts must be the same."""
    import rescorer.io.atomic_output as atomic_output

    monkeypatch.setattr(atomic_output, "BUFFER_SIZE", 50)
    lines = [b"line %d " % i + b"x" * (i % 17) for i in range(100)]
    blocks = [lines[i:i + 23] for i in range(0, len(lines), 23)]
    ways = {"one by one": lambda out: out.write_lines(lines),
            "joined": lambda out: [out.write_joined_lines(b"".join(line + b"\n" for line in block), len(block))
                                   for block in blocks]}
    seen = {}
    for name, write_all in ways.items():
        out = AtomicOutput(tmp_path / f"{name}.txt")
        out.open()
        recorded = out._stream = out._file = RecordedWrites(out._stream)
        write_all(out)
        flushed_before_the_end = out.lines_flushed
        out.finish()
        out.commit()
        seen[name] = (recorded.sizes, out.lines_written, flushed_before_the_end,
                      (tmp_path / f"{name}.txt").read_bytes())
    assert seen["joined"] == seen["one by one"]
    assert len(seen["joined"][0]) > 20 and seen["joined"][1] == 100
