"""Case 8 (statistics) and cross-checks of the interval code against independent formulas."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ani.campaign.stats import clopper_pearson, interval, mcnemar_exact, rule_of_three, wilson

Z95 = 1.959963984540054  # Phi^-1(0.975)


# --- case 8: values from the issue ---------------------------------------------------------------


def test_mcnemar_no_discordant_pairs_is_one_and_says_so():
    r = mcnemar_exact(0, 0)
    assert r.p_value == 1.0
    assert "no discordant pairs" in r.note
    assert (r.b, r.c) == (0, 0)


def test_mcnemar_0_5():
    r = mcnemar_exact(0, 5)
    assert r.p_value == pytest.approx(0.0625, abs=1e-12)
    assert r.note == ""


def test_mcnemar_1_9():
    assert mcnemar_exact(1, 9).p_value == pytest.approx(0.021484375, abs=1e-12)


def test_mcnemar_is_symmetric_in_b_c():
    assert mcnemar_exact(9, 1).p_value == mcnemar_exact(1, 9).p_value


def test_wilson_0_of_20():
    lo, hi = wilson(0, 20)
    assert lo == 0.0
    assert round(hi, 4) == 0.1611


def test_cp_0_of_20():
    lo, hi = clopper_pearson(0, 20)
    assert lo == 0.0
    assert round(hi, 5) == 0.16843


def test_cp_20_of_20():
    lo, hi = clopper_pearson(20, 20)
    assert round(lo, 5) == 0.83157
    assert hi == 1.0


def test_wilson_20_of_20_upper_exactly_one():
    lo, hi = wilson(20, 20)
    assert hi == 1.0
    assert round(lo, 4) == round(1 - 0.1611, 4)


def test_n_zero_is_uninformative_not_a_crash():
    for f in (wilson, clopper_pearson):
        iv = f(0, 0)
        assert tuple(iv) == (0.0, 1.0)
        assert "n = 0" in iv.note


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError):
        wilson(3, 2)
    with pytest.raises(ValueError):
        wilson(-1, 2)
    with pytest.raises(ValueError):
        clopper_pearson(1, 2, conf=1.5)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)
    with pytest.raises(ValueError):
        interval(1, 2, method="bogus")


# --- independent computations ---------------------------------------------------------------------


def wilson_by_hand(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return centre - half, centre + half


@pytest.mark.parametrize("k,n", [(1, 10), (5, 20), (7, 7), (3, 50), (12, 13), (0, 6)])
def test_wilson_matches_hand_formula(k, n):
    lo, hi = wilson(k, n)
    hlo, hhi = wilson_by_hand(k, n)
    assert lo == pytest.approx(max(0.0, hlo), abs=1e-9)
    assert hi == pytest.approx(min(1.0, hhi), abs=1e-9)


def test_cp_boundary_closed_forms():
    # At k = 0 the CP upper bound solves (1 - p)^n = alpha/2: p = 1 - (alpha/2)^(1/n).
    for n in (3, 6, 20, 100):
        assert clopper_pearson(0, n)[1] == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-9)
        assert clopper_pearson(n, n)[0] == pytest.approx(0.025 ** (1 / n), rel=1e-9)


def binom_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


@pytest.mark.parametrize("k,n", [(1, 10), (4, 9), (10, 30)])
def test_cp_bounds_solve_the_binomial_tail_equations(k, n):
    lo, hi = clopper_pearson(k, n)
    # upper bound: P(X <= k | hi) = alpha/2 ; lower bound: P(X >= k | lo) = alpha/2
    assert binom_cdf(k, n, hi) == pytest.approx(0.025, abs=1e-7)
    assert 1 - binom_cdf(k - 1, n, lo) == pytest.approx(0.025, abs=1e-7)


@pytest.mark.parametrize("b,c", [(0, 5), (1, 9), (2, 3), (4, 4), (0, 1), (3, 11)])
def test_mcnemar_matches_hand_binomial_sum(b, c):
    n = b + c
    m = min(b, c)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(m + 1)) / 2**n)
    assert mcnemar_exact(b, c).p_value == pytest.approx(p, abs=1e-12)


def test_rule_of_three():
    assert rule_of_three(30) == pytest.approx(0.1)
    assert rule_of_three(0) is None
    assert rule_of_three(2) == 1.0
    # the exact one-sided 95% bound at 0/n approaches 3/n from below
    assert 1 - 0.05 ** (1 / 300) < rule_of_three(300)


@given(
    st.integers(min_value=1, max_value=200).flatmap(
        lambda n: st.tuples(st.integers(0, n), st.just(n))
    )
)
def test_intervals_contain_the_estimate_and_are_ordered(kn):
    k, n = kn
    for f in (wilson, clopper_pearson):
        lo, hi = f(k, n)
        assert 0.0 <= lo <= k / n <= hi <= 1.0
