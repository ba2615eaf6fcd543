"""Content detectors for locations: postcodes, place names and street addresses.

Everything runs on a column's distinct values (vectorized pandas string methods and set
look-ups).  Place names are looked up in vocabularies built lazily, once, from Faker's address
and geo providers for several locales (real city lists where Faker has them: German, Dutch,
Italian, Polish and Indian cities, 971 world cities; states, counties, provinces, departments
and regions; country names in six languages) plus the 47 counties of Kenya (the bundled
insurance table).  English town names of the form Faker generates them ("Port Jamesview",
"Lake Anna", "Smithborough") are recognised by pattern.

Street addresses are a house number and a street word in either order, in English, German,
Dutch, French, Spanish, Italian, Portuguese and Polish ("221B Baker Street", "Hauptstr. 5",
"12, rue de la Paix", "Calle Mayor 7", "ul. Długa 3").  A postcode is a US ZIP (5 digits or
ZIP+4), a UK postcode (outward and inward parts separated by a space), a Canadian postal code,
a Dutch postcode (4 digits and 2 letters) or a German/French/Spanish/Italian 5-digit code;
integer columns need stricter evidence (see :func:`postcode_share`), because a column of
5-digit numbers is far more often an amount or a code than a postcode.

References
----------
L. Sweeney, "Simple demographics often identify people uniquely", Carnegie Mellon University,
Data Privacy Working Paper 3 (2000): ZIP code, birth date and gender single out 87% of the US.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from functools import lru_cache

import numpy as np
import pandas as pd

__all__ = [
    "KENYA_COUNTIES",
    "detect_address",
    "detect_postcode",
    "normalize_place",
    "place_masks",
    "place_vocabulary",
    "postcode_share",
]

KENYA_COUNTIES: tuple[str, ...] = (
    "Mombasa", "Kwale", "Kilifi", "Tana River", "Lamu", "Taita-Taveta", "Garissa", "Wajir",
    "Mandera", "Marsabit", "Isiolo", "Meru", "Tharaka-Nithi", "Embu", "Kitui", "Machakos",
    "Makueni", "Nyandarua", "Nyeri", "Kirinyaga", "Murang'a", "Kiambu", "Turkana", "West Pokot",
    "Samburu", "Trans-Nzoia", "Uasin Gishu", "Elgeyo-Marakwet", "Nandi", "Baringo", "Laikipia",
    "Nakuru", "Narok", "Kajiado", "Kericho", "Bomet", "Kakamega", "Vihiga", "Bungoma", "Busia",
    "Siaya", "Kisumu", "Homa Bay", "Migori", "Kisii", "Nyamira", "Nairobi",
)  # fmt: skip
"""The 47 counties of Kenya (Constitution of Kenya 2010, First Schedule)."""

_KENYA_TOWNS = ("Eldoret", "Thika", "Malindi", "Kitale", "Naivasha", "Nanyuki", "Voi", "Kisii")
#: Common names of countries that Faker's lists spell differently.
_COUNTRY_ALIASES = (
    "United States", "USA", "U.S.A.", "America", "UK", "U.K.", "Great Britain", "Britain",
    "England", "Scotland", "Wales", "Northern Ireland", "Holland", "South Korea", "North Korea",
    "Korea", "Russia", "Iran", "Syria", "Vietnam", "Laos", "Bolivia", "Venezuela", "Tanzania",
    "Congo", "DR Congo", "Ivory Coast", "Czech Republic", "Czechia", "Macedonia", "Moldova",
    "Taiwan", "Hong Kong", "Macau", "Palestine", "Vatican", "Burma", "Myanmar", "Cape Verde",
    "Puerto Rico", "Yugoslavia", "Kosovo", "UAE", "Emirates",
)  # fmt: skip
#: Place names that are also everyday words in tables (never counted as places).
_NOT_PLACES = frozenset(
    "male female man woman single married yes no none other unknown gold silver bronze "
    "platinum private public north south east west central centre center new union normal "
    "high low medium good bad basic premium standard active inactive open closed pending "
    "chronic acute general white black red green blue orange rose".split()
)
_ADDRESS_LOCALES = ("en_US", "en_GB", "en_IE", "en_CA", "en_AU", "en_IN", "de_DE", "fr_FR",
                    "es_ES", "it_IT", "nl_NL", "pl_PL", "pt_BR")  # fmt: skip
_SUFFIX_WORDS = r"(?:county|city|province|state|district|region|department|municipality|town)"


_PAREN = re.compile(r"\([^)]*\)")
_DASHES = re.compile(r"[-–—_/&,]")
_QUOTES = re.compile(r"['’.`]")
_SPACES = re.compile(r"\s+")
_AFFIX = re.compile(rf"^(?:{_SUFFIX_WORDS} of )|(?: {_SUFFIX_WORDS})$")


def _normalize_one(v: str) -> str:
    v = "".join(c for c in unicodedata.normalize("NFKD", v) if not unicodedata.combining(c))
    v = _QUOTES.sub("", _DASHES.sub(" ", _PAREN.sub(" ", v.lower())))
    return _AFFIX.sub("", _SPACES.sub(" ", v).strip())


def normalize_place(values: pd.Series) -> pd.Series:
    """Lower case, accents removed, ``(County)``-style notes dropped, dashes as spaces.

    Runs in plain Python on the (distinct) values given.

    Examples
    --------
    >>> normalize_place(pd.Series(["Mombasa (County)", "Taita–Taveta", "Murang'a", "Zürich"])).tolist()
    ['mombasa', 'taita taveta', 'muranga', 'zurich']
    """
    return pd.Series([_normalize_one(str(v)) for v in values], index=values.index, dtype=object)


def _provider(kind: str, locale: str) -> type | None:
    try:
        return importlib.import_module(f"faker.providers.{kind}.{locale}").Provider
    except (ImportError, AttributeError):
        return None


def _norm_set(names: set[str]) -> frozenset[str]:
    norm = normalize_place(pd.Series(sorted(names), dtype=object))
    return frozenset(v for v in norm if len(v) >= 3 and v not in _NOT_PLACES)


@lru_cache(maxsize=1)
def place_vocabulary() -> dict[str, frozenset[str]]:
    """Normalized place names by kind: ``city``, ``region`` and ``country`` (built once)."""
    city: set[str] = set(_KENYA_TOWNS)
    region: set[str] = set(KENYA_COUNTIES)
    country: set[str] = set(_COUNTRY_ALIASES)
    region_attrs = ("states", "counties", "provinces", "departments", "regions", "estados",
                    "union_territories")  # fmt: skip
    for loc in _ADDRESS_LOCALES:
        p = _provider("address", loc)
        if p is None:
            continue
        city.update(v for v in getattr(p, "cities", ()) if isinstance(v, str))
        country.update(v for v in getattr(p, "countries", ()) if isinstance(v, str))
        for attr in region_attrs:
            vals = getattr(p, attr, ())
            vals = vals.values() if isinstance(vals, dict) else vals
            for v in vals:
                if isinstance(v, str):
                    region.add(v)
                elif isinstance(v, tuple) and v and isinstance(v[-1], str):
                    region.add(v[-1])  # ('75', 'Paris') pairs: keep the name
    geo = _provider("geo", "en_US")
    for row in getattr(geo, "land_coords", ()):
        if len(row) >= 3 and isinstance(row[2], str):
            city.add(row[2])
    out = {"country": _norm_set(country), "region": _norm_set(region)}
    out["city"] = _norm_set(city) - out["country"] - out["region"]
    return out


#: English town names as Faker writes them (and many real ones): a compass/lake/port prefix, or
#: one word ending in a town suffix.
_TOWN = re.compile(
    r"(?:(?:North|South|East|West|New|Lake|Port|Fort|Mount|Saint|Sainte|St\.?) [A-Z][a-z]+"
    r"|[A-Z][a-z]+(?:town|ton|land|ville|berg|burg|burgh|borough|bury|view|port|mouth|stad|"
    r"furt|chester|fort|haven|side|shire|field|ford|wood|dale|mont|polis))"
)


def place_masks(values: np.ndarray) -> dict[str, np.ndarray]:
    """Which distinct values are cities, regions (states, counties, provinces) or countries.

    Examples
    --------
    >>> m = place_masks(np.array(["Nakuru", "Kenya", "Port Jamesview", "Eldoret", "42"], dtype=object))
    >>> m["region"].tolist(), m["country"].tolist(), m["city"].tolist()
    ([True, False, False, False, False], [False, True, False, False, False], [False, False, True, True, False])
    """
    vocab = place_vocabulary()
    raw = [str(v).strip() for v in values]
    keys = [_normalize_one(v) for v in raw]

    def member(words: frozenset[str]) -> np.ndarray:  # set look-ups: no copy of the vocabulary
        return np.fromiter((k in words for k in keys), dtype=bool, count=len(keys))

    out = {k: member(vocab[k]) for k in ("region", "country")}
    town = np.fromiter((_TOWN.fullmatch(v) is not None for v in raw), dtype=bool, count=len(raw))
    out["city"] = member(vocab["city"]) | (town & ~member(_NOT_PLACES))
    return out


_POSTCODE_TEXT = (
    r"\d{5}(?:-\d{4})?"  # US ZIP, ZIP+4; DE/FR/ES/IT/KE 5 digits
    r"|(?:GIR 0AA|[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2})"  # UK (space required)
    r"|[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] ?\d[ABCEGHJ-NPRSTV-Z]\d"  # Canada
    r"|[1-9]\d{3} ?(?!SA|SD|SS)[A-Z]{2}"  # Netherlands
    r"|\d{2}-\d{3}"  # Poland
)


_POSTCODE_RX = re.compile(_POSTCODE_TEXT)


def detect_postcode(values: np.ndarray) -> np.ndarray:
    """Text values shaped like a postcode (US, UK, Canada, Netherlands, Poland, 5-digit codes).

    Examples
    --------
    >>> detect_postcode(np.array(["02139", "SW1A 1AA", "K1A 0B1", "1234 AB", "12345-6789",
    ...                           "1234", "SKU-12345", "AB12CD"], dtype=object)).tolist()
    [True, True, True, True, True, False, False, False]
    """
    rx = _POSTCODE_RX
    return np.fromiter(
        (rx.fullmatch(str(v).strip().upper()) is not None for v in values),
        dtype=bool,
        count=len(values),
    )


def _dense_numbers(nums: np.ndarray) -> bool:
    """Distinct numbers filling most of their range: a sequence (record ids), not postcodes."""
    u = np.unique(nums)
    return len(u) >= 20 and len(u) >= 0.5 * (u[-1] - u[0] + 1)


def postcode_share(s: pd.Series, vc: pd.Series) -> float:
    """Frequency-weighted share of values that are postcodes (0 when the column is not one).

    ``vc`` is the value counts of a sample of ``s``.  Text columns count the values matching
    :func:`detect_postcode`; a column of 5-digit strings whose numbers fill their range
    (``00001``, ``00002``, ...) is a sequence of ids, not postcodes.  Integer columns are
    postcodes only with all of: every value 5 digits (1000-99999 allowing a lost leading
    zero, >= 90% of 10000-99999), values repeated (at most half as many distinct values as
    rows, as people share postcodes), not a sequence, and no rounding (<= 30% multiples of
    10, unlike amounts).
    """
    if len(vc) == 0 or pd.api.types.is_bool_dtype(s):
        return 0.0
    w = vc.to_numpy(dtype=float)
    if pd.api.types.is_integer_dtype(s):
        v = np.asarray(vc.index, dtype=np.int64)
        ok = (
            ((v >= 1000) & (v <= 99999)).all()
            and w[v >= 10000].sum() >= 0.9 * w.sum()
            and len(v) >= 5
            and len(v) <= 0.5 * w.sum()
            and not _dense_numbers(v)
            and (v % 10 == 0).mean() <= 0.3
        )
        return 1.0 if ok else 0.0
    if pd.api.types.is_numeric_dtype(s):
        return 0.0
    values = np.asarray(vc.index, dtype=object)
    hit = detect_postcode(values)
    if not hit.any():
        return 0.0
    text = [str(v).strip() for v in values[hit]]
    digits = np.array([int(v) for v in text if len(v) == 5 and v.isdigit()], dtype=np.int64)
    if len(digits) >= 0.9 * hit.sum() and _dense_numbers(digits):
        return 0.0
    return float(w[hit].sum() / w.sum())


#: German and Dutch street names are compounds ending in a street word: Hauptstraße, Kerkstraat.
_COMPOUND = (
    r"(?:stra(?:ss|ß)e|str|weg|gasse|allee|platz|ring|damm|ufer|chaussee|steig|pfad|markt|"
    r"straat|laan|plein|gracht|kade|dijk|singel|dreef|hof|steeg|baan|pad)"
)
_NUM = r"\d+[A-Za-z]?(?:[-/]\d+[A-Za-z]?)?"
#: Street words recognised in any letter case (the longer Faker list must be capitalized).
_CORE = (
    r"street|st|road|rd|avenue|ave|lane|ln|drive|dr|boulevard|blvd|court|ct|terrace|"
    r"crescent|highway|hwy|parkway|pkwy"
)


@lru_cache(maxsize=1)
def _address_patterns() -> tuple[tuple[re.Pattern[str], ...], re.Pattern[str], re.Pattern[str]]:
    """Compiled line patterns: (full street lines, a lone unit/number line, a bare street line).

    The street words are English suffixes (Faker's en_US/en_GB/en_AU/en_CA lists plus common
    abbreviations) and words written before the name in French, Spanish, Italian, Portuguese
    and Polish (Faker's street prefixes plus abbreviations).
    """
    suffixes: set[str] = {
        "Street", "St", "Road", "Rd", "Avenue", "Ave", "Av", "Lane", "Ln", "Drive", "Dr",
        "Boulevard", "Blvd", "Court", "Ct", "Place", "Pl", "Way", "Terrace", "Close",
        "Crescent", "Square", "Sq", "Highway", "Hwy", "Parkway", "Pkwy", "Mews", "Row",
        "Nagar", "Marg", "Chowk", "Colony", "Ganj", "Zila",
    }  # fmt: skip
    for loc in ("en_US", "en_GB", "en_AU", "en_CA"):
        p = _provider("address", loc)
        suffixes.update(getattr(p, "street_suffixes", ()) if p else ())
    before: set[str] = {
        "rue", "avenue", "av", "boulevard", "bd", "chemin", "allée", "allee", "impasse",
        "place", "quai", "route", "cours", "calle", "c", "avenida", "avda", "paseo", "plaza",
        "camino", "carrer", "via", "viale", "piazza", "corso", "vicolo", "largo", "rua",
        "travessa", "praça", "praca", "estrada", "rodovia", "ulica", "ul", "aleja", "al",
        "plac", "pl", "os", "osiedle",
    }  # fmt: skip
    for loc in ("fr_FR", "es_ES", "it_IT", "pt_BR", "pl_PL"):
        p = _provider("address", loc)
        for attr in ("street_prefixes", "street_suffixes"):
            words = getattr(p, attr, ()) if p else ()
            before.update(w for w in words if isinstance(w, str) and w.strip())

    def alt(words: set[str]) -> str:
        clean = {re.escape(w.strip().rstrip(".")) for w in words if w.strip().rstrip(".")}
        return "|".join(sorted(clean, key=len, reverse=True))

    suf, pre, num = alt(suffixes), alt(before), _NUM
    word = r"[\w'’.-]+"
    name = r"[A-Z0-9ÀÁÂÄÇÉÈÊËÍÎÏÑÓÔÖÚÛÜŁŚŻŹ][\w'’.-]*"  # a capitalized word or a number (42nd)
    particle = r"(?:(?:de|del|della|di|da|do|dos|das|la|le|du|des|von|van|der|den) )*"
    tail = (  # direction, unit, then anything after a comma (city, state, postcode)
        r"(?: (?:N|S|E|W|NE|NW|SE|SW)\.?)?"
        r"(?:,? (?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl|Room|No|#)\.? ?\S+)?(?:,.*)?"
    )
    full = (
        # 221B Baker Street, 7818 Kyle Corners Suite 031: street words capitalized as
        # Faker writes them, or the common ones in any case (123 Main st)
        rf"{num},? (?:{name} ){{1,5}}(?:{suf}|(?i:{_CORE}))\.?{tail}",
        rf"(?i:{num} (?:[a-z0-9][\w'’.-]* ){{1,4}}(?:{_CORE})\.?)",  # all lower case
        rf"{num},? (?i:{pre})\.? {particle}{name}.*",  # 12, rue de la Paix
        rf"(?i:{pre})\.? {particle}{name}(?: {word}){{0,5}},? {num}(?:\W.*)?",  # Calle Mayor 7
        rf"[A-ZÄÖÜ][\w'’.-]{{2,}}(?i:{_COMPOUND})\.?(?: {word}){{0,3}},? {num}(?:\W.*)?",  # Hauptstr. 5
        r"(?i:(?:P\.? ?O\.? ?Box|Postfach|Apartado|Casella postale|BP|H\.? ?No\.?|House No\.?)"
        r" \d+|(?:PSC|Unit) \d+,? Box \d+|(?:USNS|USNV|USS|USCGC) [A-Z]\w+).*",  # PO Box 42
    )
    unit = rf"(?i:(?:Flat|Studio|Apartment|Apt|Suite|Unit|H\.? ?No)\.? ?)?{num},?"
    street = rf"(?:{name} ){{1,4}}(?:{suf})\.?"
    return tuple(re.compile(rx) for rx in full), re.compile(unit), re.compile(street)


_DIGIT = re.compile(r"\d")


def _is_address(text: str) -> bool:
    full, unit, street = _address_patterns()
    lines = [ln.strip() for ln in re.split(r"[\n;]", text)]  # any line may hold the street
    if any(rx.fullmatch(ln) for ln in lines for rx in full):
        return True
    # British style: the number on its own line ("Flat 3", "12"), the street on another
    return any(unit.fullmatch(ln) for ln in lines) and any(street.fullmatch(ln) for ln in lines)


def detect_address(values: np.ndarray) -> np.ndarray:
    """Street addresses: a house number with a street word before or after the street name.

    Runs compiled regular expressions on the distinct values containing a digit only.

    Examples
    --------
    >>> detect_address(np.array(["221B Baker Street", "Hauptstr. 5", "12, rue de la Paix",
    ...     "Calle Mayor 7", "PO Box 42", "Baker Street", "42 apples", "Room 12"], dtype=object)).tolist()
    [True, True, True, True, True, False, False, False]
    """
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        text = str(v).strip()
        if _DIGIT.search(text) and len(text) <= 200:
            out[i] = _is_address(text)
    return out
