"""Occupations, employment status and education levels recognised by content.

A value is an occupation when it is one of Faker's job titles (English, German, French,
Spanish, Polish and Portuguese lists, about 4,800 titles, loaded once) or mentions a common
occupational word ("manager", "clerical", "nurse", "repair", ...), or an employment status
("self-employed", "state-gov", "retired", ...) as in the UCI Adult ``occupation`` and
``workclass`` columns.  Occupation is a quasi-identifier in the HIPAA expert-determination
practice and in sdcMicro's examples (Templ, Kowarik and Meindl 2015, "Statistical disclosure
control for micro-data using the R package sdcMicro", Journal of Statistical Software 67(4)).
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache

import numpy as np

__all__ = ["detect_education", "detect_occupation", "job_titles"]

_JOB_LOCALES = ("en_US", "de_DE", "fr_FR", "es_ES", "pl_PL", "pt_BR")
_WORDS = re.compile(
    r"(?i)(?:^|[\s,/-])(?:manager|managerial|director|clerk|clerical|engineer|technician|tech|"
    r"teacher|lecturer|professor|nurse|midwife|driver|sales|salesman|saleswoman|repair|"
    r"service|serv|cleaner|cleaners|cleaning|farmer|farming|fishing|fisherman|officer|assistant|"
    r"worker|operator|op|specialist|specialty|analyst|consultant|developer|programmer|"
    r"accountant|auditor|lawyer|solicitor|attorney|judge|doctor|physician|surgeon|dentist|"
    r"pharmacist|labou?rer|forces|army|military|soldier|police|policeman|firefighter|craft|"
    r"machine|transport|moving|handlers|adm|admin|administrator|administrative|exec|"
    r"executive|prof|professional|secretary|receptionist|cashier|mechanic|electrician|"
    r"plumber|carpenter|builder|chef|cook|waiter|waitress|pilot|designer|architect|"
    r"scientist|researcher|economist|journalist|editor|writer|artist|musician|actor|"
    r"librarian|tailor|trader|businessman|entrepreneur|homemaker|housewife|student|"
    r"retired|pensioner|unemployed|employed|self[- ]emp\w*|gov|government|private|"
    r"without[- ]pay|never[- ]worked|freelance\w*|contractor|civil servant)(?:$|[\s,/-])"
)


@lru_cache(maxsize=1)
def job_titles() -> frozenset[str]:
    """Lower-cased job titles from Faker's job providers for several locales."""
    titles: set[str] = set()
    for loc in _JOB_LOCALES:
        try:
            jobs = importlib.import_module(f"faker.providers.job.{loc}").Provider.jobs
        except (ImportError, AttributeError):
            continue
        titles.update(j.strip().lower() for j in jobs if isinstance(j, str))
    return frozenset(titles)


def detect_occupation(values: np.ndarray) -> np.ndarray:
    """Which distinct values are job titles, or short texts (<= 5 words) naming an occupation.

    Examples
    --------
    >>> detect_occupation(np.array(["Exec-managerial", "Accountant, chartered", "Self-emp-inc",
    ...                             "Machakos", "Silver", "the service was slow and the food cold"],
    ...                            dtype=object)).tolist()
    [True, True, True, False, False, False]
    """
    titles = job_titles()
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        text = str(v).strip()
        if text.lower() in titles:
            out[i] = True
        elif 0 < len(text.split()) <= 5:
            out[i] = _WORDS.search(text) is not None
    return out


_EDUCATION = re.compile(
    r"(?i)(?:^|[\s,/-])(?:bachelor'?s?|master'?s?|doctorate|doctoral|ph\.?d|mba|msc|bsc|"
    r"hs[- ]grad|high[- ]school|secondary|primary|tertiary|college|university|assoc|"
    r"associate|diploma|degree|graduate|undergraduate|postgraduate|school|preschool|"
    r"kindergarten|vocational|certificate|no schooling|illiterate|"
    r"\d{1,2}(?:st|nd|rd|th)(?:[- ]\d{1,2}(?:st|nd|rd|th))?(?: grade)?)(?:$|[\s,/-])"
)


def detect_education(values: np.ndarray) -> np.ndarray:
    """Which distinct values are education levels (short texts, <= 5 words).

    Examples
    --------
    >>> detect_education(np.array(["Bachelors", "HS-grad", "7th-8th", "Some-college", "Gold"],
    ...                           dtype=object)).tolist()
    [True, True, True, True, False]
    """
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        text = str(v).strip()
        if 0 < len(text.split()) <= 5:
            out[i] = _EDUCATION.search(text) is not None
    return out
