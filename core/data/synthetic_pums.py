"""SYNTHETIC American Community Survey PUMS person files, for testing the census path offline.

    *** EVERY RECORD THESE FUNCTIONS PRODUCE IS SYNTHETIC: MADE UP BY A SEEDED RANDOM GENERATOR. ***
    *** THE FILES CONTAIN NO CENSUS RECORD AND NO INFORMATION ABOUT ANY REAL PERSON.             ***

The files imitate the 2018 layout of the Census Bureau's person files (psam_pXX.csv, 285 columns:
identifiers, person variables, allocation flags and 80 replicate weights) with plausible codes and
ranges, and are written where folktables looks for them: <root>/<year>/<horizon>/psam_p<FIPS>.csv.

The income label is planted: for every record that passes ACSIncome's filter (AGEP > 16, PINCP > 100,
WKHP > 0, PWGTP >= 1), the 17 features of docs/method.md §10 are computed and y = +1 is drawn with
probability sigmoid(<theta, x>); PINCP is then set above 40000 exactly when y = +1, so a logistic fit on
the filtered records recovers the planted theta (planted_theta(state)). Every file (at least MIN_ROWS rows)
holds, among records that pass the filter, each edge occupation code of EDGE_OCCP and one missing OCCP, and
records that fail the filter on each of its four conditions alone.

Each state has its own SYNTHETIC planted design (STATE_DESIGNS: planted theta, shares of sex, race,
marriage, schooling, hours, occupation groups and classes of worker), tuned so that the logistic fit on a
file of the state's default size resembles the paper's fits on the real 2018 files in conditioning and in
one coefficient: California kappa ~ 300 with female ~ -0.27, Michigan kappa ~ 450 with schooling ~ 3.0.
The numbers are made up to match those two summaries only; nothing else in the files comes from the
census. States without a design, and every state with model="common", use COMMON_DESIGN (PLANTED_THETA,
balanced groups), the model the fixture files of tests/data were made with.

Command line: python -m core.data.synthetic_pums --root DIR --state CA [--state MI] [--rows N] [--seed S]
[--model state|common]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
from folktables.load_acs import _STATE_CODES

from core.data.acs import HORIZONS, OCCUPATION_RANGES, encode_features

# The planted coefficients in the order of core.data.acs.FEATURE_NAMES; moderate, so that ~100k
# filtered records recover them.
PLANTED_THETA = np.array(
    [-1.5, 0.8, 1.8, 2.0, 0.3, 1.0, 1.2, 0.2, 1.1, -0.9, -0.2, 0.3, 0.5, -0.4, 0.4, -0.3, -1.0]
)
# Group boundaries and neighbours of docs/method.md §10, plus 9920 (unemployed, no work in 5 years).
EDGE_OCCP = (
    10, 960, 1005, 1555, 1980, 2001, 2920, 3000, 3550, 3601, 4655, 4700, 5940, 6005, 7640, 7700, 9830, 9920
)
MIN_ROWS = 100  # room for the edge-code records and the records that fail each filter condition

# 2018 census occupation codes of the eight groups of docs/method.md §10 (the last one is the reference).
_OCCP_GROUPS = (
    (10, 20, 40, 51, 52, 60, 101, 102, 110, 120, 135, 136, 137, 140, 150, 160, 205, 220, 230, 300, 310, 335, 340,
     350, 360, 410, 420, 425, 440, 500, 510, 520, 530, 540, 565, 600, 630, 640, 650, 700, 705, 710, 725, 726, 735,
     750, 800, 810, 820, 830, 845, 850, 860, 900, 910, 930, 940, 960),
    (1005, 1006, 1007, 1010, 1021, 1022, 1031, 1032, 1050, 1065, 1105, 1106, 1108, 1200, 1220, 1240, 1305, 1306,
     1310, 1320, 1340, 1350, 1360, 1400, 1410, 1420, 1430, 1440, 1450, 1460, 1520, 1530, 1541, 1545, 1551, 1555,
     1560, 1600, 1610, 1640, 1650, 1700, 1710, 1720, 1745, 1750, 1760, 1800, 1821, 1822, 1825, 1840, 1860, 1900,
     1910, 1920, 1935, 1970, 1980),
    (2001, 2002, 2003, 2004, 2005, 2006, 2011, 2012, 2013, 2014, 2015, 2016, 2025, 2040, 2050, 2060, 2100, 2105,
     2145, 2170, 2180, 2205, 2300, 2310, 2320, 2330, 2350, 2360, 2400, 2435, 2440, 2545, 2555, 2600, 2631, 2632,
     2633, 2634, 2635, 2636, 2640, 2700, 2710, 2721, 2722, 2723, 2740, 2751, 2752, 2755, 2770, 2805, 2810, 2825,
     2830, 2840, 2850, 2861, 2862, 2865, 2905, 2910, 2920),
    (3000, 3010, 3030, 3040, 3050, 3090, 3100, 3110, 3120, 3140, 3150, 3160, 3200, 3210, 3220, 3230, 3245, 3250,
     3255, 3256, 3258, 3261, 3270, 3300, 3310, 3321, 3322, 3323, 3324, 3330, 3401, 3402, 3421, 3422, 3423, 3424,
     3430, 3500, 3515, 3520, 3545, 3550),
    (3601, 3602, 3603, 3605, 3610, 3620, 3630, 3640, 3645, 3646, 3647, 3648, 3649, 3655, 3700, 3710, 3720, 3725,
     3740, 3750, 3801, 3802, 3820, 3840, 3870, 3900, 3910, 3930, 3940, 3945, 3946, 3960, 4000, 4010, 4020, 4030,
     4040, 4055, 4110, 4120, 4130, 4140, 4150, 4160, 4200, 4210, 4220, 4230, 4240, 4251, 4252, 4255, 4330, 4340,
     4350, 4400, 4420, 4435, 4461, 4465, 4500, 4510, 4521, 4522, 4525, 4530, 4540, 4600, 4621, 4622, 4640, 4655),
    (4700, 4710, 4720, 4740, 4750, 4760, 4800, 4810, 4820, 4830, 4840, 4850, 4900, 4920, 4930, 4940, 4950, 4965,
     5000, 5010, 5020, 5040, 5100, 5110, 5120, 5140, 5150, 5160, 5165, 5220, 5230, 5240, 5250, 5260, 5300, 5310,
     5320, 5330, 5340, 5350, 5360, 5400, 5410, 5420, 5500, 5510, 5521, 5522, 5530, 5540, 5550, 5560, 5600, 5610,
     5630, 5700, 5710, 5720, 5730, 5740, 5810, 5820, 5840, 5850, 5860, 5900, 5910, 5920, 5940),
    (6005, 6010, 6040, 6050, 6115, 6130, 6200, 6210, 6220, 6230, 6240, 6250, 6260, 6305, 6330, 6355, 6360, 6400,
     6410, 6441, 6442, 6460, 6515, 6520, 6530, 6540, 6600, 6660, 6700, 6710, 6720, 6730, 6740, 6765, 6800, 6825,
     6835, 6850, 6950, 7000, 7010, 7020, 7030, 7040, 7100, 7120, 7130, 7140, 7150, 7160, 7200, 7210, 7220, 7240,
     7260, 7300, 7315, 7320, 7330, 7340, 7350, 7360, 7410, 7420, 7430, 7510, 7540, 7560, 7610, 7640),
    (7700, 7720, 7730, 7740, 7750, 7800, 7810, 7830, 7840, 7850, 7855, 7905, 7925, 7950, 8000, 8025, 8030, 8040,
     8100, 8130, 8140, 8225, 8250, 8255, 8256, 8300, 8310, 8320, 8335, 8350, 8365, 8450, 8465, 8500, 8510, 8530,
     8540, 8555, 8600, 8610, 8620, 8630, 8640, 8650, 8710, 8720, 8730, 8740, 8750, 8760, 8800, 8810, 8830, 8850,
     8910, 8920, 8930, 8940, 8950, 8990, 9005, 9030, 9040, 9050, 9110, 9121, 9122, 9130, 9141, 9142, 9150, 9210,
     9240, 9265, 9300, 9310, 9350, 9365, 9410, 9415, 9430, 9510, 9570, 9600, 9610, 9620, 9630, 9640, 9645, 9650,
     9720, 9760, 9800, 9810, 9825, 9830),
)
# Share of workers per occupation group, then 9920; groups are deliberately balanced for a
# well-conditioned design.
_OCCP_GROUP_SHARES = (0.14, 0.1, 0.1, 0.1, 0.15, 0.17, 0.09, 0.14, 0.01)
# SOC major groups (first two digits of SOCP) of each occupation group.
_SOC_MAJORS = (("11", "13"), ("15", "17", "19"), ("21", "23", "25", "27"), ("29",), ("31", "33", "35", "37", "39"),
               ("41", "43"), ("45", "47", "49"), ("51", "53", "55"))
# Class of worker among workers: 1..9, then missing; 8, 9 and missing ("unknown") are made more common
# than in the census so that every indicator is well represented.
_COW_SHARES = (0.58, 0.08, 0.07, 0.04, 0.03, 0.09, 0.05, 0.04, 0.01, 0.01)
# A few codes of each kind, for plausible values: (INDP, NAICSP), birthplaces, languages, ancestries, degrees.
_INDUSTRIES = ((170, "111"), (770, "23"), (3570, "3361MV"), (4971, "4451"), (6070, "481"), (6870, "52M1"),
               (7380, "5415"), (7460, "5417"), (7860, "6111"), (7870, "611M1"), (8191, "622M"), (8470, "6244"),
               (8680, "722Z"), (9190, "813M"), (9470, "92MP"))
_FOREIGN_BIRTHPLACES = (110, 120, 207, 210, 217, 233, 247, 301, 303, 312, 313, 327, 329, 501)
_LANGUAGES = (1200, 1210, 1250, 1350, 1360, 1690, 1970, 2000, 2050, 2575, 2715, 2770)
_ANCESTRIES = (22, 32, 50, 51, 142, 210, 706, 720, 902, 939)
_DEGREE_FIELDS = (1100, 1301, 2100, 2102, 2407, 2408, 3301, 3600, 3700, 5200, 5501, 6100, 6107, 6200, 6203, 6211)
_STATE_FIPS = tuple(int(c) for c in _STATE_CODES.values() if c != "72")
_DIVISIONS = {
    1: "CT ME MA NH RI VT", 2: "NJ NY PA", 3: "IL IN MI OH WI", 4: "IA KS MN MO NE ND SD",
    5: "DE FL GA MD NC SC VA WV", 6: "AL KY MS TN", 7: "AR LA OK TX", 8: "AZ CO ID MT NV NM UT WY",
    9: "AK CA HI OR WA", 0: "PR",
}
_REGION_OF_DIVISION = {0: 9, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 3, 8: 4, 9: 4}
_ADJINC = {2017: 1011189, 2018: 1013097, 2019: 1010145}  # other years: no adjustment (1.000000)
# 2018 population in millions: default file sizes follow the census sample (California: about 380,000 rows).
_POPULATION = {
    "AL": 4.89, "AK": 0.74, "AZ": 7.17, "AR": 3.01, "CA": 39.56, "CO": 5.70, "CT": 3.57, "DE": 0.97, "FL": 21.30,
    "GA": 10.52, "HI": 1.42, "ID": 1.75, "IL": 12.74, "IN": 6.69, "IA": 3.16, "KS": 2.91, "KY": 4.47, "LA": 4.66,
    "ME": 1.34, "MD": 6.04, "MA": 6.90, "MI": 9.99, "MN": 5.61, "MS": 2.99, "MO": 6.13, "MT": 1.06, "NE": 1.93,
    "NV": 3.03, "NH": 1.36, "NJ": 8.91, "NM": 2.10, "NY": 19.54, "NC": 10.38, "ND": 0.76, "OH": 11.69, "OK": 3.94,
    "OR": 4.19, "PA": 12.81, "RI": 1.06, "SC": 5.08, "SD": 0.88, "TN": 6.77, "TX": 28.70, "UT": 3.16, "VT": 0.63,
    "VA": 8.52, "WA": 7.54, "WV": 1.81, "WI": 5.81, "WY": 0.58, "PR": 3.20,
}
_ROWS_PER_MILLION = 9_600
_FLAGS = (
    "FAGEP FANCP FCITP FCITWP FCOWP FDDRSP FDEARP FDEYEP FDISP FDOUTP FDPHYP FDRATP FDRATXP FDREMP FENGP FESRP "
    "FFERP FFODP FGCLP FGCMP FGCRP FHINS1P FHINS2P FHINS3C FHINS3P FHINS4C FHINS4P FHINS5C FHINS5P FHINS6P FHINS7P "
    "FHISP FINDP FINTP FJWDP FJWMNP FJWRIP FJWTRP FLANP FLANXP FMARP FMARHDP FMARHMP FMARHTP FMARHWP FMARHYP FMIGP "
    "FMIGSP FMILPP FMILSP FOCCP FOIP FPAP FPERNP FPINCP FPOBP FPOWSP FPRIVCOVP FPUBCOVP FRACP FRELP FRETP FSCHGP "
    "FSCHLP FSCHP FSEMP FSEXP FSSIP FSSP FWAGP FWKHP FWKLP FWKWP FWRKP FYOEP"
).split()
_REPLICATES = tuple(f"PWGTP{k}" for k in range(1, 81))
# The 2018 person file's column order.
_COLUMNS = (
    "RT SERIALNO DIVISION SPORDER PUMA REGION ST ADJINC PWGTP AGEP CIT CITWP COW DDRS DEAR DEYE DOUT DPHY DRAT "
    "DRATX DREM ENG FER GCL GCM GCR HINS1 HINS2 HINS3 HINS4 HINS5 HINS6 HINS7 INTP JWMNP JWRIP JWTR LANX MAR MARHD "
    "MARHM MARHT MARHW MARHYP MIG MIL MLPA MLPB MLPCD MLPE MLPFG MLPH MLPI MLPJ MLPK NWAB NWAV NWLA NWLK NWRE OIP "
    "PAP RELP RETP SCH SCHG SCHL SEMP SEX SSIP SSP WAGP WKHP WKL WKW WRK YOEP ANC ANC1P ANC2P DECADE DIS DRIVESP "
    "ESP ESR FOD1P FOD2P HICOV HISP INDP JWAP JWDP LANP MIGPUMA MIGSP MSP NAICSP NATIVITY NOP OC OCCP PAOC PERNP "
    "PINCP POBP POVPIP POWPUMA POWSP PRIVCOV PUBCOV QTRBIR RAC1P RAC2P RAC3P RACAIAN RACASN RACBLK RACNH RACNUM "
    "RACPI RACSOR RACWHT RC SCIENGP SCIENGRLP SFN SFR SOCP VPS WAOB"
).split() + _FLAGS + list(_REPLICATES)
# Text columns: codes written zero-padded (as in the census files) and the alphanumeric ones.
_PADDED = {"SPORDER": 2, "PUMA": 5, "ST": 2, "OCCP": 4, "INDP": 4, "MIGPUMA": 5, "POWPUMA": 5}
_TEXT = ("RT", "SERIALNO", "NAICSP", "SOCP")

_AGES = np.arange(95)
_AGE_WEIGHTS = np.where(_AGES < 65, 1.0, np.exp(-(_AGES - 65) / 10.0)) + np.where(_AGES == 94, 0.5, 0.0)
_WORK_RATE = np.where(
    _AGES < 16, 0.0, np.interp(_AGES, [16, 18, 25, 55, 62, 67, 75, 94], [0.3, 0.55, 0.8, 0.8, 0.6, 0.35, 0.12, 0.03])
)
# Highest grade or degree of adults, SCHL 1..24.
_ADULT_SCHL = np.array(
    [15, 1, 1, 4, 4, 4, 4, 4, 4, 4, 4, 10, 12, 15, 20, 200, 35, 60, 120, 85, 200, 90, 25, 17], dtype=float
)



@dataclasses.dataclass(frozen=True)
class Design:
    """A state's SYNTHETIC planted model: the coefficients and the shares its records are drawn with.

    theta: the planted coefficients, in the order of core.data.acs.FEATURE_NAMES.
    female: share of women. race: weights of RAC1P 1..9. married: factor on the age curve of being married.
    schooling: weights of SCHL 1..24 among adults. hours: mean and spread of WKHP (for those not at exactly 40),
    full_time: share at exactly 40 hours. occupations: shares of the eight occupation groups of docs/method.md §10
    (the last is the reference group), then of 9920. classes: shares of COW 1..9, then of a missing COW.
    """

    theta: np.ndarray
    female: float = 0.5
    race: tuple[float, ...] = (62, 7, 1, 0.2, 0.1, 14, 0.5, 10, 5)
    married: float = 1.0
    schooling: tuple[float, ...] = tuple(_ADULT_SCHL)
    hours: tuple[float, float] = (36, 17)
    full_time: float = 0.3
    occupations: tuple[float, ...] = _OCCP_GROUP_SHARES
    classes: tuple[float, ...] = _COW_SHARES


# One design for every state: balanced groups, a well-conditioned design (kappa about 190 at 150,000 rows).
# It made the fixture files of tests/data (model="common").
COMMON_DESIGN = Design(theta=PLANTED_THETA)
# Per-state designs, tuned so that a logistic fit on a file of the state's default size has about the
# condition number and the named coefficient the paper reports on the real 2018 files (section 4.2):
# California kappa ~ 300, female ~ -0.27; Michigan kappa ~ 450, schooling ~ 3.0. The smallest eigenvalues
# come from the rare unknown class of worker (COW 8, 9 or missing: about 1.2 % of CA's workers, 0.8 % of
# MI's) and from the near-collinear occupation indicators (a reference group of 10 %); the largest from the
# intercept and the common indicators. Measured at the default size, seed 0: tests/data/README.md.
STATE_DESIGNS = {
    "CA": Design(
        theta=np.array([-1.9, 0.8, 2.4, 2.3, 0.25, 1.2, 1.5, 0.4, 1.3, -0.9, 0.0, 0.2, 0.5, -0.27, 0.5, -0.2,
                        -1.0]),
        female=0.46,
        race=(58, 6, 1, 0.1, 0.1, 17, 0.4, 13, 4.5),
        married=0.9,
        hours=(37, 14),
        full_time=0.45,
        occupations=(0.16, 0.07, 0.1, 0.06, 0.17, 0.21, 0.07, 0.1, 0.01),
        classes=(0.66, 0.07, 0.04, 0.07, 0.03, 0.07, 0.03, 0.0059, 0.00295, 0.00295),
    ),
    "MI": Design(
        theta=np.array([-2.0, 0.9, 2.4, 3.0, 0.3, 1.0, 1.3, 0.2, 1.2, -1.0, -0.1, 0.3, 0.5, -0.5, 0.5, -0.3,
                        -1.0]),
        female=0.48,
        race=(80, 13, 0.5, 0.1, 0.05, 3.5, 0.05, 0.6, 2.8),
        married=1.0,
        hours=(37, 14),
        full_time=0.45,
        occupations=(0.14, 0.05, 0.09, 0.06, 0.18, 0.21, 0.08, 0.1, 0.01),
        classes=(0.7, 0.07, 0.04, 0.06, 0.02, 0.06, 0.03, 0.0041, 0.00205, 0.00205),
    ),
}
MODELS = ("state", "common")


def planted_design(state: str, model: str = "state") -> Design:
    """The planted design of a state's SYNTHETIC file.

    model="state": the state's own design (STATE_DESIGNS), or COMMON_DESIGN for a state without one;
    model="common": COMMON_DESIGN for every state (the model the fixture files of tests/data were made with).
    """
    if model not in MODELS:
        raise ValueError(f"model must be 'state' or 'common', got {model!r}")
    return STATE_DESIGNS.get(state, COMMON_DESIGN) if model == "state" else COMMON_DESIGN


def planted_theta(state: str, model: str = "state") -> np.ndarray:
    """The planted coefficients of a state's SYNTHETIC file (a copy), in the order of FEATURE_NAMES."""
    return planted_design(state, model).theta.copy()

def _pick(rng: np.random.Generator, n: int, codes, weights=None) -> np.ndarray:
    """n codes drawn with the given (unnormalised) weights, as floats."""
    p = None if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
    return rng.choice(np.asarray(codes, dtype=float), size=n, p=p)


def _within(values: np.ndarray, universe: np.ndarray) -> np.ndarray:
    """The values inside the variable's universe, missing (NaN) outside it."""
    return np.where(universe, values, np.nan)


def _yes_no(rng: np.random.Generator, n: int, p_yes, universe: np.ndarray) -> np.ndarray:
    """1 (yes) with probability p_yes, else 2 (no), inside the universe."""
    return _within(np.where(rng.random(n) < p_yes, 1.0, 2.0), universe)


def _roles(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Age, work in the past 12 months, and the records forced into special roles.

    Edge-code records are adult workers that pass the filter; some 16-year-old workers fail only on age;
    some adult workers fail only on PWGTP (weight 0) or only on PINCP (<= 100).
    """
    age = rng.choice(_AGES, size=n, p=_AGE_WEIGHTS / _AGE_WEIGHTS.sum()).astype(float)
    worker = rng.random(n) < _WORK_RATE[age.astype(int)]
    special = rng.choice(n, size=len(EDGE_OCCP) + 3, replace=False)
    edge, sixteen = special[: len(EDGE_OCCP) + 1], special[len(EDGE_OCCP) + 1 :]
    age[edge] = np.where(age[edge] > 16, age[edge], rng.integers(17, 65, size=edge.size))
    age[sixteen] = 16
    worker[special] = True
    is_edge = np.zeros(n, dtype=bool)
    is_edge[edge] = True
    pool = np.flatnonzero((age > 16) & worker & ~is_edge)
    k_zero, k_low = max(2, n // 500), max(3, n // 50)
    chosen = rng.choice(pool, size=k_zero + k_low, replace=False)
    zero_weight, low_income = (np.zeros(n, dtype=bool) for _ in range(2))
    zero_weight[chosen[:k_zero]] = True
    low_income[chosen[k_zero:]] = True
    return {"AGEP": age, "worker": worker, "edge": edge, "zero_weight": zero_weight, "low_income": low_income}


def _demographics(rng: np.random.Generator, p: dict[str, np.ndarray], design: Design) -> None:
    """Sex, race, marital status and schooling."""
    age = p["AGEP"]
    n = age.size
    p["SEX"] = np.where(rng.random(n) < design.female, 2.0, 1.0)
    p["RAC1P"] = _pick(rng, n, range(1, 10), design.race)
    married = design.married * np.interp(age, [15, 20, 25, 30, 40, 65, 80, 94],
                                         [0, 0.05, 0.25, 0.45, 0.6, 0.6, 0.45, 0.2])
    widowed = np.interp(age, [15, 50, 65, 80, 94], [0, 0.02, 0.08, 0.3, 0.6])
    divorced = np.where(age >= 25, 0.1, 0.01)
    cut = np.cumsum([married, widowed, divorced, np.full(n, 0.02)], axis=0)
    mar = 1.0 + (rng.random(n)[None, :] >= cut).sum(axis=0)
    p["MAR"] = np.where(age < 15, 5.0, mar)
    adult = _pick(rng, n, range(1, 25), design.schooling)
    adult = np.where(age < 26, np.minimum(adult, age - 2), adult)  # the young cannot have finished a degree
    child = np.clip(age - 2 - rng.integers(0, 2, size=n), 1, 15)
    p["SCHL"] = np.where(age < 3, np.nan, np.where(age < 18, child, adult))


def _work(rng: np.random.Generator, p: dict[str, np.ndarray], design: Design) -> None:
    """Hours, class of worker and occupation: for workers, and for others who worked in the past 5 years."""
    age, worker = p["AGEP"], p["worker"]
    n = age.size
    mean, sd = design.hours
    hours = np.where(rng.random(n) < design.full_time, 40.0, np.clip(np.round(rng.normal(mean, sd, size=n)), 1, 99))
    hours = np.where(age < 17, np.clip(np.round(rng.normal(15, 8, size=n)), 1, 40), hours)
    p["WKHP"] = _within(hours, worker)
    recent = ~worker & (age >= 16) & (rng.random(n) < np.where(age < 65, 0.35, 0.1))
    never = ~worker & ~recent & (age >= 16) & (rng.random(n) < 0.03)  # unemployed, no work in 5 years
    cow = _pick(rng, n, [*range(1, 10), np.nan], design.classes)
    cow = np.where(recent, _pick(rng, n, range(1, 8), design.classes[:7]), cow)
    p["COW"] = np.where(worker | recent, cow, np.where(never, 9.0, np.nan))
    shares = np.asarray(design.occupations, dtype=float)
    group = rng.choice(shares.size, size=n, p=shares / shares.sum())
    occp = np.full(n, 9920.0)
    for g, codes in enumerate(_OCCP_GROUPS):
        occp[group == g] = _pick(rng, int(np.sum(group == g)), codes)
    occp = np.where(worker | recent, occp, np.where(never, 9920.0, np.nan))
    occp[p["edge"]] = [*EDGE_OCCP, np.nan]
    p["OCCP"] = occp


def _weights(rng: np.random.Generator, p: dict[str, np.ndarray]) -> None:
    """Person weight (0 for the zero-weight records) and the 80 replicate weights around it."""
    n = p["AGEP"].size
    weight = np.clip(np.round(np.exp(rng.normal(np.log(80), 0.6, size=n))), 1, 2500)
    p["PWGTP"] = np.where(p["zero_weight"], 0.0, weight)
    # One row per replicate, so each column is contiguous.
    factors = np.array([0.29, 1.0, 1.0, 1.71])[rng.integers(0, 4, size=(len(_REPLICATES), n))]
    p["replicates"] = np.round(p["PWGTP"] * factors * rng.uniform(0.9, 1.1, size=factors.shape))


def _income(rng: np.random.Generator, p: dict[str, np.ndarray], theta: np.ndarray) -> None:
    """PINCP and its parts; above 40000 exactly when the planted model says y = +1.

    For the adult workers not forced to a low income, y = +1 has probability sigmoid(<theta, x>).
    """
    age, worker = p["AGEP"], p["worker"]
    n = age.size
    labelled = (age > 16) & worker & ~p["low_income"]
    x = encode_features({k: p[k][labelled] for k in ("AGEP", "WKHP", "SCHL", "RAC1P", "OCCP", "MAR", "SEX", "COW")})
    positive = np.zeros(n, dtype=bool)
    positive[labelled] = rng.random(x.shape[0]) < 1.0 / (1.0 + np.exp(-x @ theta))
    high = np.minimum(40001 + np.floor(rng.exponential(35000, size=n)), 250000)
    low = np.floor(101 + 39900 * rng.beta(1.6, 1.2, size=n))
    # Low incomes cycle through a loss, zero and 1..100, so each appears in every file.
    kind = np.cumsum(p["low_income"]) % 3
    tiny = np.select([kind == 0, kind == 1], [-rng.integers(1, 20000, size=n), 0], rng.integers(1, 101, size=n))
    teen = rng.integers(101, 15000, size=n)
    parts = _other_income(rng, age)
    pincp = np.where(positive, high, low)
    pincp = np.where(p["low_income"], tiny, np.where(worker & (age <= 16), teen, pincp))
    interest = np.where(worker & (pincp > 100) & (rng.random(n) < 0.3), np.floor(pincp * rng.uniform(0, 0.2, n)), 0)
    earnings = pincp - interest
    self_employed = np.isin(p["COW"], (6, 7)) | (p["low_income"] & (tiny < 0))
    p["WAGP"] = np.where(worker & ~self_employed, earnings, 0.0)
    p["SEMP"] = np.where(worker & self_employed, earnings, 0.0)
    for name, value in parts.items():
        p[name] = np.where(worker, 0.0, value)
    p["INTP"] = np.where(worker, interest, parts["INTP"])
    p["PINCP"] = np.where(worker, pincp, sum(parts.values()))
    p["PERNP"] = p["WAGP"] + p["SEMP"]
    for name in ("WAGP", "SEMP", "INTP", "SSP", "RETP", "SSIP", "PAP", "OIP", "PINCP", "PERNP"):
        p[name] = _within(p[name], age >= 15)


def _other_income(rng: np.random.Generator, age: np.ndarray) -> dict[str, np.ndarray]:
    """Income of people who did not work: social security, retirement, interest (sometimes a loss), aid."""
    n = age.size

    def amount(p_has, lo, hi):
        return np.where(rng.random(n) < p_has, rng.integers(lo, hi, size=n), 0).astype(float)

    interest = amount(0.2, 1, 20000)
    interest = np.where(rng.random(n) < 0.01, -rng.integers(1, 10000, size=n), interest)
    return {
        "SSP": np.where(age >= 62, amount(0.8, 4000, 30000), 0.0),
        "RETP": np.where(age >= 55, amount(0.3, 1000, 60000), 0.0),
        "SSIP": amount(0.03, 1000, 10000),
        "PAP": amount(0.02, 100, 8000),
        "INTP": interest,
        "OIP": amount(0.05, 100, 20000),
    }


def _serial_numbers(rng: np.random.Generator, count: int, state: str) -> np.ndarray:
    """Increasing numbers inside the state's population share of 1..9,999,999, so that serial numbers do
    not repeat across states (unless a state is given far more rows than its census file has)."""
    states = list(_POPULATION)
    shares = np.array([_POPULATION[s] for s in states]) / sum(_POPULATION.values()) * 9_999_999
    k = states.index(state)
    start, block = int(shares[:k].sum()), int(shares[k])
    step = max(1, min(20, block // max(count, 1)))
    return start + np.cumsum(rng.integers(1, step + 1, size=count))


def _identity(rng: np.random.Generator, p: dict[str, np.ndarray], state: str, year: int) -> dict[str, np.ndarray]:
    """Record type, serial numbers (group quarters first, as the census sorts them), geography, household role."""
    age, n = p["AGEP"], p["AGEP"].size
    gq = np.arange(n) < rng.binomial(n, 0.025)
    number = np.zeros(n, dtype=np.int64)
    for part in (gq, ~gq):
        number[part] = _serial_numbers(rng, int(part.sum()), state)
    kind = np.where(gq, f"{year}GQ", f"{year}HU")
    serial = pc.binary_join_element_wise(pa.array(kind), pc.utf8_lpad(pa.array(number).cast(pa.string()), 7, "0"), "")
    division = next(d for d, states in _DIVISIONS.items() if state in states.split())
    pumas = np.sort(rng.choice(np.arange(100, 12000), size=min(265, max(3, n // 1400)), replace=False))
    child = _pick(rng, n, (2, 3, 4, 7, 10, 14), (80, 2, 5, 10, 2, 1))
    spouse_or_head = np.where(rng.random(n) < 0.55, 0.0, 1.0)
    other = _pick(rng, n, (0, 2, 5, 6, 10, 11, 12, 13, 15), (55, 20, 3, 3, 4, 2, 5, 6, 2))
    relp = np.where(age < 18, child, np.where(p["MAR"] == 1, spouse_or_head, other))
    relp = np.where(gq, np.where(rng.random(n) < 0.4, 16.0, 17.0), relp)
    p["gq"], p["RELP"] = gq, relp
    return {
        "RT": np.full(n, "P"),
        "SERIALNO": serial,
        "DIVISION": np.full(n, float(division)),
        "SPORDER": np.where(np.isin(relp, (0, 16, 17)), 1.0, rng.integers(2, 7, size=n)),
        "PUMA": rng.choice(pumas, size=n).astype(float),
        "REGION": np.full(n, float(_REGION_OF_DIVISION[division])),
        "ST": np.full(n, float(_STATE_CODES[state])),
        "ADJINC": np.full(n, float(_ADJINC.get(year, 1_000_000))),
        "RELP": relp,
        "QTRBIR": _pick(rng, n, range(1, 5)),
    }


def _origin(rng: np.random.Generator, p: dict[str, np.ndarray], state: str, year: int) -> dict[str, np.ndarray]:
    """Birthplace, citizenship, entry year, Hispanic origin, detailed race, ancestry and language."""
    age, race, n = p["AGEP"], p["RAC1P"], p["AGEP"].size
    home = float(_STATE_CODES[state])
    native_place = np.where(rng.random(n) < 0.65, home, _pick(rng, n, _STATE_FIPS + (66, 72)))
    pobp = np.where(rng.random(n) < 0.8, native_place, _pick(rng, n, _FOREIGN_BIRTHPLACES))
    foreign = pobp >= 100
    cit = np.where(foreign, _pick(rng, n, (3, 4, 5), (5, 50, 45)), np.where(pobp > 56, 2.0, 1.0))
    yoep = _within(year - age + np.floor(rng.random(n) * (age + 1)), foreign)
    waob = np.select(
        [pobp <= 56, pobp < 100, pobp < 200, pobp < 300, pobp == 301, pobp < 400], [1, 2, 5, 4, 7, 3], 8
    ).astype(float)
    two_or_more = race == 9
    first = rng.integers(0, 6, size=n)
    second = (first + 1 + rng.integers(0, 5, size=n)) % 6
    flags = {}
    for k, (name, single) in enumerate(zip(("RACWHT", "RACBLK", "RACAIAN", "RACASN", "RACNH", "RACSOR"),
                                           ((1,), (2,), (3, 4, 5), (6,), (7,), (8,)), strict=True)):
        flags[name] = (np.isin(race, single) | (two_or_more & ((first == k) | (second == k)))).astype(float)
    flags["RACPI"] = flags["RACNH"]
    rac2p = np.select([race <= 2, race <= 5, race == 6, race == 7, race == 8],
                      [race, rng.integers(3, 38, size=n), _pick(rng, n, (38, 43, 45, 49, 50, 57, 58)),
                       _pick(rng, n, (60, 61, 63)), 67], 68).astype(float)
    rac3p = np.select([race <= 2, race <= 5, race == 6, race == 7, race == 8],
                      [race, 3, rng.integers(4, 11, size=n), rng.integers(11, 14, size=n), 14],
                      rng.integers(15, 101, size=n)).astype(float)
    anc = _pick(rng, n, range(1, 5), (55, 25, 5, 15))
    lanx = _yes_no(rng, n, np.where(foreign, 0.85, 0.25), age >= 5)
    return {
        "POBP": pobp, "NATIVITY": np.where(foreign, 2.0, 1.0), "CIT": cit, "WAOB": waob, "YOEP": yoep,
        "CITWP": _within(yoep + np.floor(rng.random(n) * (year - yoep + 1)), cit == 4),
        "DECADE": _within(np.clip((yoep - 1950) // 10 + 2, 1, 8), foreign),
        "HISP": np.where(rng.random(n) < 0.65, 1.0, _pick(rng, n, range(2, 25), [70] + [30 / 22] * 22)),
        "RAC2P": rac2p, "RAC3P": rac3p, **flags, "RACNUM": np.where(two_or_more, 2.0, 1.0),
        "ANC": anc,
        "ANC1P": np.select([anc == 3, anc == 4], [996, 999], _pick(rng, n, _ANCESTRIES)),
        "ANC2P": np.where(anc == 2, _pick(rng, n, _ANCESTRIES), 999.0),
        "LANX": lanx,
        "LANP": _within(_pick(rng, n, _LANGUAGES, [60] + [4] * 11), lanx == 1),
        "ENG": _within(_pick(rng, n, range(1, 5), (55, 20, 17, 8)), lanx == 1),
    }


def _health(rng: np.random.Generator, p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Disabilities and health insurance."""
    age, n = p["AGEP"], p["AGEP"].size
    everyone = np.ones(n, dtype=bool)
    old = age >= 65
    out = {
        "DEAR": _yes_no(rng, n, np.where(old, 0.15, 0.02), everyone),
        "DEYE": _yes_no(rng, n, np.where(old, 0.06, 0.015), everyone),
        "DDRS": _yes_no(rng, n, np.where(old, 0.08, 0.02), age >= 5),
        "DPHY": _yes_no(rng, n, np.where(old, 0.2, 0.04), age >= 5),
        "DREM": _yes_no(rng, n, np.where(old, 0.1, 0.04), age >= 5),
        "DOUT": _yes_no(rng, n, np.where(old, 0.14, 0.03), age >= 15),
    }
    out["DIS"] = np.where(np.any([v == 1 for v in out.values()], axis=0), 1.0, 2.0)
    shares = (0.55, 0.12, np.where(old, 0.95, 0.02), 0.2, 0.02, 0.02, 0.01)
    hins = {f"HINS{k}": _yes_no(rng, n, share, everyone) for k, share in enumerate(shares, start=1)}
    covered = {k: hins[k] == 1 for k in hins}
    private = covered["HINS1"] | covered["HINS2"] | covered["HINS5"]
    public = covered["HINS3"] | covered["HINS4"] | covered["HINS6"]
    return {
        **out, **hins,
        "HICOV": np.where(private | public, 1.0, 2.0),
        "PRIVCOV": np.where(private, 1.0, 2.0),
        "PUBCOV": np.where(public, 1.0, 2.0),
    }


def _family(rng: np.random.Generator, p: dict[str, np.ndarray], year: int) -> dict[str, np.ndarray]:
    """Marital history, fertility, grandchildren, own children and subfamilies."""
    age, mar, relp, n = p["AGEP"], p["MAR"], p["RELP"], p["AGEP"].size
    ever = (age >= 15) & (mar <= 4)
    gcl = _yes_no(rng, n, 0.03, (age >= 30) & ~p["gq"])
    gcr = _yes_no(rng, n, 0.35, gcl == 1)
    own_child = (age < 18) & np.isin(relp, (2, 3, 4))
    subfamily = rng.random(n) < 0.03
    return {
        "MSP": _within(np.select([mar == 1, mar == 2, mar == 3, mar == 4], [1 + (rng.random(n) < 0.05), 3, 4, 5], 6),
                       age >= 15),
        "MARHD": _yes_no(rng, n, 0.01, ever), "MARHM": _yes_no(rng, n, 0.02, ever),
        "MARHW": _yes_no(rng, n, 0.005, ever),
        "MARHT": _within(_pick(rng, n, (1, 2, 3), (80, 16, 4)), ever),
        "MARHYP": _within(year - np.floor(rng.random(n) * (age - 14)), ever),
        "FER": _yes_no(rng, n, 0.05, (p["SEX"] == 2) & (age >= 15) & (age <= 50)),
        "GCL": gcl, "GCR": gcr, "GCM": _within(_pick(rng, n, range(1, 6)), gcr == 1),
        "ESP": _within(_pick(rng, n, range(1, 9), (45, 10, 5, 3, 20, 2, 12, 3)), own_child),
        "NOP": _within(_pick(rng, n, range(1, 9)), own_child),
        "OC": own_child.astype(float),
        "RC": ((age < 18) & np.isin(relp, (2, 3, 4, 7, 10, 14))).astype(float),
        "PAOC": _within(_pick(rng, n, range(1, 5), (15, 10, 10, 65)), (p["SEX"] == 2) & (age >= 16)),
        "SFN": _within(_pick(rng, n, (1, 2, 3), (85, 12, 3)), subfamily),
        "SFR": _within(_pick(rng, n, range(1, 7)), subfamily),
    }


def _school_and_service(rng: np.random.Generator, p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """School enrolment, fields of degree and military service."""
    age, schl, n = p["AGEP"], p["SCHL"], p["AGEP"].size
    in_school = np.select([age < 18, age < 25], [0.97, 0.45], 0.07)
    sch = _within(np.where(rng.random(n) < in_school, _pick(rng, n, (2, 3), (85, 15)), 1.0), age >= 3)
    grade = np.where(age < 18, np.clip(age - 3, 1, 14), np.where((age >= 23) & (rng.random(n) < 0.5), 16, 15))
    degree = schl >= 21
    fod1p = _within(_pick(rng, n, _DEGREE_FIELDS), degree)
    mil = _within(np.where(rng.random(n) < np.where(age >= 60, 0.15, 0.04), _pick(rng, n, (2, 3), (85, 15)),
                           np.where(rng.random(n) < 0.005, 1.0, 4.0)), age >= 17)
    veteran = np.isin(mil, (2, 3))
    p["MIL"] = mil
    dratx = _yes_no(rng, n, 0.25, veteran)
    periods = {name: _within((rng.random(n) < 0.2).astype(float), veteran)
               for name in ("MLPA", "MLPB", "MLPCD", "MLPE", "MLPFG", "MLPH", "MLPI", "MLPJ", "MLPK")}
    return {
        "SCH": sch, "SCHG": _within(grade, np.isin(sch, (2, 3))),
        "FOD1P": fod1p, "FOD2P": _within(_pick(rng, n, _DEGREE_FIELDS), degree & (rng.random(n) < 0.1)),
        "SCIENGP": _yes_no(rng, n, 0.35, degree), "SCIENGRLP": _yes_no(rng, n, 0.1, degree),
        "MIL": mil, **periods, "VPS": _within(_pick(rng, n, range(1, 16)), veteran),
        "DRATX": dratx, "DRAT": _within(_pick(rng, n, range(1, 7)), dratx == 1),
    }


def _job(rng: np.random.Generator, p: dict[str, np.ndarray], state: str) -> dict[str, np.ndarray]:
    """Employment status, weeks worked, commute, place of work, industry and SOC code."""
    age, worker, n = p["AGEP"], p["worker"], p["AGEP"].size
    adult = age >= 16
    esr = np.where(worker, _pick(rng, n, (1, 2, 3), (92, 4, 4)), np.where(rng.random(n) < 0.06, 3.0, 6.0))
    esr = _within(np.where(worker & (p["MIL"] == 1), 4.0, esr), adult)
    at_work = np.isin(esr, (1, 4))
    jwtr = _within(_pick(rng, n, range(1, 13), (85, 3, 0.3, 1, 0.5, 0.1, 0.2, 0.3, 1, 2.5, 5, 1.1)), at_work)
    commute = at_work & (jwtr != 11)
    jwrip = _within(np.where(rng.random(n) < 0.88, 1.0, rng.integers(2, 11, size=n)), jwtr == 1)
    home = float(_STATE_CODES[state])
    has_job = ~np.isnan(p["OCCP"])
    industry = rng.integers(0, len(_INDUSTRIES), size=n)
    unemployed = p["OCCP"] == 9920
    indp = np.array([i for i, _ in _INDUSTRIES], dtype=float)[industry]
    naicsp = np.array([c for _, c in _INDUSTRIES])[industry]
    mig = _within(_pick(rng, n, (1, 2, 3), (86, 1, 13)), age >= 1)
    return {
        "ESR": esr, "WRK": _within(np.where(at_work, 1.0, 2.0), adult),
        "WKL": _within(np.select([worker, has_job & ~unemployed], [1, 2], 3).astype(float), adult),
        "WKW": _within(_pick(rng, n, range(1, 7), (75, 4, 6, 5, 5, 5)), worker),
        "JWTR": jwtr, "JWRIP": jwrip, "DRIVESP": _within(np.minimum(jwrip, 6), jwtr == 1),
        "JWMNP": _within(np.clip(np.round(rng.gamma(2.0, 14.0, size=n)), 1, 200), commute),
        "JWAP": _within(rng.integers(1, 286, size=n).astype(float), commute),
        "JWDP": _within(rng.integers(1, 151, size=n).astype(float), commute),
        "POWSP": _within(np.where(rng.random(n) < 0.97, home, _pick(rng, n, _STATE_FIPS)), at_work),
        "POWPUMA": _within(rng.integers(100, 12000, size=n).astype(float), at_work),
        "NWAB": _within(_pick(rng, n, (1, 2, 3), (3, 90, 7)), adult & ~at_work),
        "NWAV": _within(_pick(rng, n, range(1, 6), (10, 2, 1, 80, 7)), adult & ~at_work),
        "NWLA": _within(_pick(rng, n, (1, 2, 3), (1, 92, 7)), adult & ~at_work),
        "NWLK": _within(_pick(rng, n, (1, 2, 3), (8, 85, 7)), adult & ~at_work),
        "NWRE": _within(_pick(rng, n, (1, 2, 3), (1, 92, 7)), adult & ~at_work),
        "INDP": _within(np.where(unemployed, 9920.0, indp), has_job),
        "NAICSP": np.where(has_job, np.where(unemployed, "999920", naicsp), None),
        "SOCP": np.where(has_job, np.where(unemployed, "999920", _soc_codes(rng, p["OCCP"])), None),
        "MIG": mig,
        "MIGSP": np.select([mig == 3, mig == 2], [np.where(rng.random(n) < 0.8, home, _pick(rng, n, _STATE_FIPS)),
                                                  _pick(rng, n, _FOREIGN_BIRTHPLACES)], np.nan),
        "MIGPUMA": np.select([mig == 3, mig == 2], [rng.integers(100, 12000, size=n), 1], np.nan),
        "POVPIP": _within(np.clip(np.round(np.nan_to_num(p["PINCP"], nan=30000) / 150 + rng.normal(100, 60, n)),
                                  0, 501), ~(p["gq"] & (p["RELP"] == 16))),
    }


def _soc_codes(rng: np.random.Generator, occp: np.ndarray) -> np.ndarray:
    """Six-character SOC codes whose major group matches the occupation group; some end in X or XX."""
    n = occp.size
    group = np.searchsorted([lo for lo, _ in OCCUPATION_RANGES] + [7700], occp, side="right") - 1
    major = np.full(n, "99")
    for g, options in enumerate(_SOC_MAJORS):
        major[group == g] = rng.choice(options, size=int(np.sum(group == g)))
    detail = rng.integers(0, 10000, size=n)
    broad = rng.random(n)
    tail = np.where(
        broad < 0.1,
        np.char.add(np.char.zfill((detail // 100).astype(str), 2), "XX"),
        np.where(broad < 0.2, np.char.add(np.char.zfill((detail // 10).astype(str), 3), "X"),
                 np.char.zfill(detail.astype(str), 4)),
    )
    return np.char.add(major, tail)


def _flags(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Allocation flags: 1 (the value was imputed) for a few percent of records, else 0."""
    rates = rng.uniform(0.005, 0.08, size=len(_FLAGS))
    return {name: (rng.random(n) < rate).astype(float) for name, rate in zip(_FLAGS, rates, strict=True)}


def _arrow(name: str, values: np.ndarray) -> pa.Array:
    """One column as the census file writes it: integers, zero-padded codes or text; missing = null."""
    if name in _TEXT:
        return pa.array(values, type=pa.string())
    missing = np.isnan(values)
    ints = pa.array(np.where(missing, 0, values).astype(np.int64), mask=missing)
    if name in _PADDED:
        return pc.utf8_lpad(ints.cast(pa.string()), _PADDED[name], "0")
    return ints


def _check(rows: int, state: str, year: int) -> None:
    """Reject arguments that would not give a file folktables reads as a person file."""
    if state not in _STATE_CODES:
        raise ValueError(f"unknown state {state!r}; use a two-letter code such as CA or MI")
    if not (isinstance(rows, (int, np.integer)) and rows >= MIN_ROWS):
        raise ValueError(f"rows must be an integer >= {MIN_ROWS}, got {rows!r}")
    if int(year) < 2017:
        raise ValueError(f"the psam_pXX.csv layout starts with survey year 2017, got {year}")


def _pums_table(rows: int, state: str, seed: int, year: int, model: str = "state") -> pa.Table:
    """One state's SYNTHETIC person records as an Arrow table in the census column order."""
    _check(rows, state, year)
    rng = np.random.default_rng([seed, int(_STATE_CODES[state])])  # each state its own stream
    design = planted_design(state, model)
    p = _roles(rng, rows)
    _demographics(rng, p, design)
    _work(rng, p, design)
    _weights(rng, p)
    _income(rng, p, design.theta)
    columns = _identity(rng, p, state, year)
    columns.update(_origin(rng, p, state, year))
    columns.update(_health(rng, p))
    columns.update(_family(rng, p, year))
    columns.update(_school_and_service(rng, p))
    columns.update(_job(rng, p, state))
    columns.update(_flags(rng, rows))
    for name in ("PWGTP", "AGEP", "COW", "MAR", "SCHL", "SEX", "WKHP", "OCCP", "RAC1P", "PINCP", "PERNP", "WAGP",
                 "SEMP", "INTP", "SSP", "RETP", "SSIP", "PAP", "OIP"):
        columns[name] = p[name]
    columns.update(zip(_REPLICATES, p["replicates"], strict=True))
    return pa.table({name: _arrow(name, columns[name]) for name in _COLUMNS})


def synthetic_pums_frame(rows: int, state: str, seed: int, year: int = 2018, model: str = "state") -> pd.DataFrame:
    """One state's SYNTHETIC person records, as the file holds them: nullable integers, text codes.

    Zero-padded codes (OCCP "0010", PUMA, ST, SPORDER, INDP, MIGPUMA, POWPUMA) stay text, as in the file.
    """
    table = _pums_table(rows, state, seed, int(year), model)
    types = {pa.int64(): pd.Int64Dtype(), pa.string(): pd.StringDtype()}
    return table.to_pandas(types_mapper=types.get)


def default_rows(state: str) -> int:
    """About as many rows as the state's 2018 1-Year person file (California: about 380,000)."""
    if state not in _POPULATION:
        raise ValueError(f"unknown state {state!r}; use a two-letter code such as CA or MI")
    return round(_POPULATION[state] * _ROWS_PER_MILLION)


Progress = Callable[[float], None]  # told the share of the work done, from 0 to 1, as rows are written
WRITE_STEPS = 20  # batches a file is written in, each one a step of its progress


def write_synthetic_pums(
    root: str | os.PathLike,
    states: list[str] | tuple[str, ...],
    year: int = 2018,
    horizon: str = "1-Year",
    rows: int | None = None,
    seed: int = 0,
    model: str = "state",
    progress: Progress | None = None,
) -> dict[Path, str]:
    """Write each state's SYNTHETIC file where folktables looks: <root>/<year>/<horizon>/psam_p<FIPS>.csv. Returns
    each path written, in the order of states, with the SHA-256 hex digest of the bytes written to it (hashed on
    their way out, not read back: what was written, whatever the file holds later).

    rows applies to every state (default: the size of the state's census file); each state draws from its
    own stream of `seed`, so a state's file does not depend on which other states are written. model:
    "state" (each state's planted design) or "common" (one design for all; see planted_design). progress, if
    given, is told the share done after each state's records are drawn and after each batch written, so a screen
    can show a file of the default size (tens of seconds) being made.
    """
    if horizon not in HORIZONS:
        raise ValueError(f"horizon must be '1-Year' or '5-Year', got {horizon!r}")
    sizes = {state: default_rows(state) if rows is None else rows for state in states}
    for state, n in sizes.items():  # every argument is checked before any file is written
        _check(n, state, int(year))
        planted_design(state, model)
    told = progress or (lambda share: None)
    written: dict[Path, str] = {}
    for k, (state, n) in enumerate(sizes.items()):
        table = _pums_table(n, state, seed, int(year), model)
        told((k + 0.5) / len(sizes))  # drawing the records takes about as long as writing them
        path = Path(root) / str(year) / horizon / f"psam_p{_STATE_CODES[state]}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        written[path] = _write(table, path, lambda done, k=k: told((k + 0.5 + 0.5 * done) / len(sizes)))
    return written


def synthetic_pums_digest(rows: int, state: str, seed: int, year: int = 2018, model: str = "state") -> str:
    """The SHA-256 hex digest of the bytes write_synthetic_pums writes for this state (the horizon only names the
    folder), computed in memory: the records drawn again and written as CSV into the hash, no file read or written.
    The generator is seeded and byte-deterministic, so this is what the file holds unless something else wrote it."""
    _check(rows, state, int(year))
    sink = _Hashing(None)
    _csv(_pums_table(rows, state, seed, int(year), model), sink, lambda done: None)
    return sink.hexdigest()


class _Hashing(io.RawIOBase):
    """A binary stream that hashes (SHA-256) every byte written on its way to `out` (None: nowhere)."""

    def __init__(self, out: BinaryIO | None) -> None:
        super().__init__()
        self.out, self.sha = out, hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.sha.update(data)
        if self.out is not None:
            self.out.write(data)
        return len(data)

    def hexdigest(self) -> str:
        return self.sha.hexdigest()


def _csv(table: pa.Table, sink: _Hashing, progress: Progress) -> None:
    """The table as the census file writes it, into sink, in WRITE_STEPS batches (progress told the share written)."""
    options = pa_csv.WriteOptions(include_header=True, quoting_style="none", quoting_header="none")
    batches = table.to_batches(max_chunksize=max(1, -(-table.num_rows // WRITE_STEPS)))
    with pa_csv.CSVWriter(pa.PythonFile(sink, mode="w"), table.schema, write_options=options) as writer:
        for done, batch in enumerate(batches, 1):
            writer.write_batch(batch)
            progress(done / len(batches))


def _write(table: pa.Table, path: Path, progress: Progress) -> str:
    """The table as the census file writes it (progress told the share written) to a partial file of this process
    and thread, then moved into place: folktables takes any existing file as complete, and two writers of the same
    file never share a partial one. Returns the SHA-256 hex digest of the bytes written."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.partial")
    with partial.open("wb") as out:
        sink = _Hashing(out)
        _csv(table, sink, progress)
    partial.replace(path)
    return sink.hexdigest()


def main(argv: list[str] | None = None) -> None:
    """Command line: write SYNTHETIC person files and print their paths."""
    parser = argparse.ArgumentParser(
        prog="python -m core.data.synthetic_pums",
        description="Write SYNTHETIC ACS PUMS person files (no census record) where folktables reads them.",
    )
    parser.add_argument("--root", required=True, help="folktables' root folder")
    parser.add_argument("--state", action="append", required=True, help="two-letter state code; repeatable")
    parser.add_argument("--year", type=int, default=2018)
    parser.add_argument("--horizon", default="1-Year", choices=HORIZONS)
    parser.add_argument("--rows", type=int, default=None, help="rows per state (default: the census file's size)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="state", choices=MODELS,
                        help="state: each state's planted design (default); common: one design for every state")
    args = parser.parse_args(argv)
    try:
        paths = write_synthetic_pums(args.root, args.state, args.year, args.horizon, args.rows, args.seed,
                                     args.model)
    except ValueError as exc:
        parser.error(str(exc))
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
