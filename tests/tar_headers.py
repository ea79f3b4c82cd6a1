"""Tar header blocks written field by field, as tar writes them, for archives whose fields a test chooses: a size
written with a sign or in base 256, a link with a size, a PAX record of any content."""

from __future__ import annotations


def header(name: bytes, size: bytes | int, kind: bytes = b"0") -> bytes:
    """One ustar header block, the size field given as written (bytes) or as octal (int), its checksum right."""
    block = bytearray(512)
    block[0:len(name)] = name
    block[100:108], block[108:116], block[116:124] = b"0000644\0", b"0000000\0", b"0000000\0"
    block[124:136] = size if isinstance(size, bytes) else b"%011o\0" % size
    block[136:148], block[148:156], block[156:157] = b"00000000000\0", b" " * 8, kind
    block[257:263], block[263:265] = b"ustar\0", b"00"
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def member(name: bytes, data: bytes, kind: bytes = b"0", size: bytes | int | None = None) -> bytes:
    """A header and its data, padded to whole blocks; ``size`` as written in the header if not the data's."""
    return header(name, len(data) if size is None else size, kind) + data + b"\0" * (-len(data) % 512)


def pax(records: dict[str, str]) -> bytes:
    """A PAX extended header: records "%d %s=%s\\n", each length counting the whole record."""
    body = b""
    for key, value in records.items():
        rest = f" {key}={value}\n"
        length = len(rest) + 1
        while len(str(length)) + len(rest) != length:
            length = len(str(length)) + len(rest)
        body += f"{length}{rest}".encode()
    return member(b"././@PaxHeader", body, b"x")
