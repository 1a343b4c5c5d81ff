"""Reading a file the user named: regular files only, with a size cap, never a hang.

A FIFO would block the read forever, ``/dev/zero`` would grow the process without end, and a
directory or socket is not a file to read. Each is refused from its file type (``fstat`` on a
descriptor opened without blocking), before a byte is read; a name the file system cannot take
(too long, a NUL byte) is bad input, not a crash.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from whichgpu.errors import DataError, InputError

MAX_TEXT_BYTES = 64 * 2**20  # any data file whichgpu reads (offer lists, profiles, CSVs)
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def stat_path(path: Path | str) -> os.stat_result | None:
    """``os.stat`` of a path the user typed; None when there is nothing there. A name the file
    system cannot take (too long, an embedded NUL) is nothing there, not a crash."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except (NotADirectoryError, ValueError):
        return None
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP, errno.EINVAL):
            return None
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def open_regular(path: Path | str) -> int:
    """A read-only descriptor of ``path``, or an InputError when it is not a regular file.

    Opened with O_NONBLOCK so that a FIFO does not block the open; the check is on the
    descriptor itself (``fstat``), so the file read is the file checked.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a file") from None
    except ValueError:  # an embedded NUL byte
        raise InputError(f"{str(path)[:200]!r} is not a file name") from None
    except OSError as exc:
        raise InputError(f"cannot read {str(path)[:300]}: {exc.strerror or exc}") from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputError(f"{path} is {file_kind(mode)}, not a regular file")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def read_regular(path: Path | str, max_bytes: int = MAX_TEXT_BYTES, *,
                 what: str = "this kind of file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (larger ones are refused unread)."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise DataError(path, f"{size:,} bytes is too large for {what} (at most "
                            f"{max_bytes:,}): is it a weights file?")
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            try:
                data = f.read(max_bytes + 1)
            except OSError as exc:  # /proc/self/mem: a "regular" file that refuses reads
                raise InputError(f"cannot read {str(path)[:300]} ({exc.strerror or exc}): "
                                 "not a regular file with content") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > max_bytes:
        raise DataError(path, f"more than {max_bytes:,} bytes: too large for {what}")
    return data


def read_text(path: Path | str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """A regular UTF-8 text file the user named (see :func:`read_regular`)."""
    try:
        return read_regular(path, max_bytes).decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(path, "not a UTF-8 text file") from None


