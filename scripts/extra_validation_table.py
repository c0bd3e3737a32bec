#!/usr/bin/env python3
"""Prints the table of docs/validation-errors.md's "Outside the shared set" section: every pair of
validation/extra/datasets.txt run through `validate --format csv`, one row per measurement set.

    scripts/extra_validation_table.py [BUILD_DIR]      (default build/release)
"""
import csv
import io
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rows_of(validate, scenario, measured):
    out = subprocess.run([validate, "--scenario", scenario, measured, "--format", "csv"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    sets = {}
    for r in csv.DictReader(io.StringIO(out)):
        if r["scored"] == "1":
            sets.setdefault((r["dataset"], r["collective"]), []).append(r)
    return sets


def mape(rows):
    return "%.1f%%" % (sum(abs(float(r["error_pct"])) for r in rows) / len(rows)) if rows else "-"


def main():
    build = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build/release")
    validate = str(build / "apps/validate")
    print("| dataset | collective | ranks | sizes | MAPE all | MAPE <= 64 KiB | MAPE >= 64 MiB | "
          "signed >= 64 MiB | chosen algorithm/protocol (small to large) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for line in (ROOT / "validation/extra/datasets.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        scenario, measured = line.split()
        for (name, collective), rows in rows_of(validate, scenario, measured).items():
            small = [r for r in rows if int(r["size_bytes"]) <= 64 << 10]
            large = [r for r in rows if int(r["size_bytes"]) >= 64 << 20]
            signed = "%+.1f%%" % (sum(float(r["error_pct"]) for r in large) / len(large)) if large else "-"
            choices = []
            for r in rows:
                c = r["algorithm"] + "/" + r["protocol"]
                if not choices or choices[-1] != c:
                    choices.append(c)
            print(f"| {name} | {collective} | {rows[0]['ranks']} | {len(rows)} | {mape(rows)} | {mape(small)} | "
                  f"{mape(large)} | {signed} | {' '.join(choices)} |")


if __name__ == "__main__":
    main()
