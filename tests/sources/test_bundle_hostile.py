"""Hostile ZIP files are refused without harm: names that climb out, symbolic links and special files, too
many entries, a zip bomb (declared honestly, or with sizes that lie, or with the declared-size check
gone so only the streaming count stands), nested archives, foreign compression.  Each is a typed error
naming the entry; nothing is written outside the cache folder, the cache folder is left empty, and
memory stays bounded.  The bombs are 2 GiB of zeros in ~2 MB and take well under a second."""

from __future__ import annotations

import resource
import stat
import time
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import bundlekit as bk
import pytest

import app.sources.bundle as bundle
from app.sources.bundle import BundleError, BundleUnsafeError, open_bundle

# What a refused bomb may cost in Python memory (the brief's bound is a few hundred MB; chunks are 1 MiB).
MEMORY_CAP = 64 * bk.MiB


def refused(tmp_path: Path, zpath: Path, error: type[BaseException] = BundleUnsafeError, **caps: Any) -> BaseException:
    """Open ``zpath`` expecting ``error``; asserts nothing was written anywhere but the (emptied) cache folder."""
    cache = tmp_path / "cache"
    before = bk.tree(tmp_path)
    with pytest.raises(error) as err:
        open_bundle(zpath, cache_root=cache, **caps)
    assert bk.leftovers(cache) == []
    assert bk.tree(tmp_path) - before <= {"cache", "cache/bundles"}
    return err.value


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../x", "climbs out"),
        ("session/../../x", "climbs out"),
        ("a/../../x", "climbs out"),
        ("/etc/x", "absolute path"),
        ("/tmp/x", "absolute path"),
        ("C:/x", "names a drive"),
        ("..\\x", "backslash"),
        ("session\\..\\..\\x", "backslash"),
        ("a//x", "empty or '.'"),
        ("./x", "empty or '.'"),
        ("session/x:stream", "':'"),
        ("session/NUL", "Windows device"),
        ("com1.txt", "Windows device"),
        ("session/x.", "ends in a dot"),
        ("a/" * 3000 + "x", "nested deeper"),
        ("n" * 2000, "longer than"),
    ],
    ids=lambda v: v[:24] if isinstance(v, str) else None,
)
def test_zip_slip_names_are_refused(tmp_path: Path, name: str, why: str) -> None:  # and names that exhaust path limits
    good = bk.exported_bundle(tmp_path)
    evil = bk.rewrite(good, tmp_path / "evil.zip", add={name: b"pwned"})
    err = refused(tmp_path, evil)
    assert isinstance(err, BundleUnsafeError) and err.entry == name and why in str(err) and "refused" in str(err)
    assert not (tmp_path / "x").exists() and not (tmp_path / "cache" / "x").exists()


def test_a_symbolic_link_entry_is_refused(tmp_path: Path) -> None:
    info = zipfile.ZipInfo("session/link")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    evil = bk.rewrite(bk.exported_bundle(tmp_path), tmp_path / "link.zip", add={})
    with zipfile.ZipFile(evil, "a") as zf:
        zf.writestr(info, "/etc/passwd")
    err = refused(tmp_path, evil)
    assert "session/link" in str(err) and "symbolic link" in str(err)


def test_a_device_entry_is_refused(tmp_path: Path) -> None:
    evil = bk.raw_zip(
        tmp_path / "dev.zip", [bk.manifest_entry(), bk.RawEntry(b"dev", b"", external_attr=(stat.S_IFCHR | 0o600) << 16)]
    )
    assert "special file" in str(refused(tmp_path, evil))


def test_an_executable_entry_is_unpacked_without_exec_bits(tmp_path: Path) -> None:
    ok = bk.raw_zip(
        tmp_path / "x.zip", [bk.manifest_entry(), bk.RawEntry(b"session/run.sh", b"#!/bin/sh\n", external_attr=0o4755 << 16)]
    )
    opened = open_bundle(ok, cache_root=tmp_path / "cache")
    try:
        assert stat.S_IMODE((opened.folder / "session" / "run.sh").stat().st_mode) == 0o600
        assert opened.check.extra == ("session/run.sh",) and not opened.check.ok  # unlisted: never verified
    finally:
        bundle.close_bundle(opened)


def test_too_many_entries(tmp_path: Path) -> None:
    entries = [bk.manifest_entry(), *(bk.RawEntry(f"f{i}".encode(), b"x") for i in range(60))]
    many = bk.raw_zip(tmp_path / "many.zip", entries)
    assert "61 entries" in str(refused(tmp_path, many, max_entries=50))
    # An end record that understates the count: the directory itself is counted too.
    liar = bk.raw_zip(tmp_path / "liar.zip", entries, count=1)
    assert "more than the 50 entries" in str(refused(tmp_path, liar, max_entries=50))


def _many(tmp_path: Path, n: int) -> Path:
    # n records of 52 bytes under an end record that says 1: the directory's size alone does not stop them.
    return bk.raw_zip(
        tmp_path / "many.zip", [bk.manifest_entry(), *(bk.RawEntry(f"{i:06d}".encode(), b"") for i in range(n))], count=1
    )


def test_a_directory_that_understates_its_count_costs_no_objects(tmp_path: Path) -> None:
    # 19,000 records for a cap of 1,000 entries (a 1 MB directory): counted in the directory's bytes,
    # never built into 19,000 ZipInfo objects (~10 MB).
    many = _many(tmp_path, 19_000)
    err, elapsed, peak = _bounded(lambda: refused(tmp_path, many, max_entries=1_000))
    assert "more than the 1000 entries" in str(err) and peak < 4 * bk.MiB and elapsed < 5


@pytest.mark.slow
def test_a_directory_that_understates_its_count_at_the_default_cap(tmp_path: Path) -> None:
    many = _many(tmp_path, 190_000)  # a 9.9 MB directory, under the default cap's 10 MB
    err, _elapsed, peak = _bounded(lambda: refused(tmp_path, many))
    assert f"more than the {bundle.MAX_ENTRIES} entries" in str(err) and peak < 16 * bk.MiB


def test_a_directory_too_large_for_its_entries_is_not_parsed(tmp_path: Path) -> None:
    # 200 records of 1000-byte names: 200 KB of directory for a cap of 10 entries (10 KB), refused before zipfile parses it.
    entries = [bk.manifest_entry(), *(bk.RawEntry(b"n" * 990 + f"{i:010d}".encode(), b"") for i in range(200))]
    big = bk.raw_zip(tmp_path / "dir.zip", entries, count=1)
    assert "ZIP directory" in str(refused(tmp_path, big, max_entries=10))


def _bomb(tmp_path: Path, total: int, declared: int, name: str = "bomb.zip") -> Path:
    zeros = bk.deflated_zeros(total)
    entry = bk.RawEntry(b"session/session.jsonl", zeros, method=zipfile.ZIP_DEFLATED, declared_size=declared, crc=0)
    return bk.raw_zip(tmp_path / name, [bk.manifest_entry(), entry])


def _bounded(fn: Any) -> tuple[Any, float, int]:
    """``fn()``, the seconds it took and the peak of Python memory it allocated."""
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        result = fn()
    finally:
        elapsed = time.monotonic() - t0
        _size, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return result, elapsed, peak


def test_a_zip_bomb_declared_honestly(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path, 2 * bk.GiB, 2 * bk.GiB)
    assert bomb.stat().st_size < 4 * bk.MiB
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err, elapsed, peak = _bounded(lambda: refused(tmp_path, bomb))
    assert isinstance(err, BundleUnsafeError) and "session/session.jsonl" in str(err) and "cap" in str(err)
    assert peak < MEMORY_CAP and elapsed < 5
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) * 1024 < 300 * bk.MiB


def test_a_zip_bomb_whose_sizes_lie(tmp_path: Path) -> None:
    # The headers claim 1 KB; the stream holds 2 GiB. Unpacking stops at the claim and the damage is an error.
    bomb = _bomb(tmp_path, 2 * bk.GiB, 1024)
    err, elapsed, peak = _bounded(lambda: refused(tmp_path, bomb, error=BundleError))
    assert "damaged" in str(err) and peak < MEMORY_CAP and elapsed < 5


def test_the_streaming_count_stops_a_bomb_the_declared_check_missed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Declared sizes can lie in ways a ZIP reader does not catch: with the declared-size check gone, the
    # bytes counted while unpacking still stop the bomb at the cap (64 MiB here), on disk and in memory.
    bomb = _bomb(tmp_path, 2 * bk.GiB, 2 * bk.GiB)
    monkeypatch.setattr(bundle, "admit", lambda zf, *_caps: [i for i in zf.infolist() if not i.is_dir()])
    cap = 64 * bk.MiB
    err, elapsed, peak = _bounded(lambda: refused(tmp_path, bomb, max_total_bytes=cap, max_entry_bytes=cap))
    assert isinstance(err, BundleUnsafeError) and "more than the" in str(err) and "session/session.jsonl" in str(err)
    assert peak < MEMORY_CAP and elapsed < 5


@pytest.mark.slow
def test_the_streaming_count_at_the_default_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The default caps with the declared-size check gone: the default cap's 512 MiB really is unpacked to
    # disk before the bomb (four entries of 2 GiB of zeros) is refused, and removed after.
    zeros = bk.deflated_zeros(2 * bk.GiB)
    entries = [bk.manifest_entry()] + [
        bk.RawEntry(f"session/part{i}".encode(), zeros, method=zipfile.ZIP_DEFLATED, crc=0, declared_size=2 * bk.GiB)
        for i in range(4)
    ]
    bomb = bk.raw_zip(tmp_path / "big.zip", entries)
    monkeypatch.setattr(bundle, "admit", lambda zf, *_caps: [i for i in zf.infolist() if not i.is_dir()])
    err, _elapsed, peak = _bounded(lambda: refused(tmp_path, bomb))
    assert isinstance(err, BundleUnsafeError) and f"{bundle.MAX_ENTRY_BYTES}-byte cap" in str(err) and peak < MEMORY_CAP


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("session/inner.zip", b"whatever"),
        ("session/inner.JAR", b"whatever"),
        ("session/session.jsonl", b"PK\x03\x04" + b"\0" * 60),
        ("notes.bin", b"PK\x05\x06" + b"\0" * 18),
    ],
)
def test_a_nested_archive_is_refused(tmp_path: Path, name: str, data: bytes) -> None:
    evil = bk.raw_zip(tmp_path / "nest.zip", [bk.manifest_entry(), bk.RawEntry(name.encode(), data)])
    err = refused(tmp_path, evil)
    assert isinstance(err, BundleUnsafeError) and err.entry == name and "nested archive" in str(err)


def test_a_foreign_compression_method_is_refused(tmp_path: Path) -> None:
    evil = bk.raw_zip(tmp_path / "bz.zip", [bk.manifest_entry(), bk.RawEntry(b"a", b"BZh9", method=zipfile.ZIP_BZIP2)])
    assert "compression method 12" in str(refused(tmp_path, evil, error=BundleError))


def test_duplicate_names_are_refused(tmp_path: Path) -> None:
    evil = bk.raw_zip(tmp_path / "dup.zip", [bk.manifest_entry(), bk.RawEntry(b"a", b"1"), bk.RawEntry(b"a", b"2")])
    assert "appears twice" in str(refused(tmp_path, evil))


def test_a_file_and_a_folder_of_the_same_name_are_refused(tmp_path: Path) -> None:
    evil = bk.raw_zip(
        tmp_path / "clash.zip", [bk.manifest_entry(), bk.RawEntry(b"session", b"1"), bk.RawEntry(b"session/x", b"2")]
    )
    err = refused(tmp_path, evil)
    assert isinstance(err, BundleUnsafeError) and err.entry == "session/x" and "runs through a file" in str(err)
