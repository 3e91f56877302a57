"""The bound on regular expressions handed to FRR (ani.adapters.regex_bound): issue 23's
nested repetitions took vtysh to 1.1 GB and bgpd to 1.16 GB."""

from __future__ import annotations

import pytest

from ani.adapters import regex_bound


@pytest.mark.parametrize(
    ("text", "copies"),
    [
        ("(((.{1,100}){1,100}){1,100})", 999_999),   # the probe
        (".{1,1000}", 999),
        ("(a|b){10}", 18),
        ("[[:digit:]]{3}", 2),                       # a class is one atom
        ("[{]{5}", 4),                               # '{' in brackets is a literal
        ("a{2,}", 2),
        ("x{,5}", 4),                                # glibc reads {,n} as {0,n}
        ("(.{,100}){,100}", 9_999),                  # the bypass an outside check found
        ("(.{0000001,0000100}){0000001,0000100}", 9_999),  # leading zeros: any digits
        ("\\(.\\{,50\\}\\)\\{,50\\}", 2499),            # the same in the basic syntax
        ("a{,}", 0),                                 # no number: no copies
        ("a{}", 0),
        ("x{" + "9" * 4000 + "}", regex_bound.MAX_COUNT - 1),  # read without int()'s digit limit
        ("\\(.\\{1,50\\}\\)\\{1,50\\}", 2499),          # the basic syntax, counted too
        ("(_){1,10}", 63),                           # bgpd's `_` is 7 atoms
        ("description a) b {x} c", 0),
    ],
)
def test_copies(text: str, copies: int) -> None:
    assert regex_bound.copies(text) == copies


def test_check_names_the_bound_and_quotes_nothing() -> None:
    assert regex_bound.check(".{1,256}") is None and regex_bound.check("^65000_[0-9]{1,5}(_[0-9]{1,5}){0,20}$") is None
    reason = regex_bound.check("SECRET(.{1,257})")
    assert reason is not None and "256 more" in reason and "at most 255" in reason and "SECRET" not in reason
