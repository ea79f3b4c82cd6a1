"""Text for a terminal or a rendered file: values that come from captures, profiles, environments and indexes are
printed through ``one_line`` so that they can neither break a line nor drive the terminal."""


def one_line(text: str) -> str:
    """``text`` kept on one line of a rendered file or terminal: line breaks, escape sequences and other
    unprintable characters (from a GPU name, a profile note, an environment variable) written escaped."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
