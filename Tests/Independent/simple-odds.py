#!/usr/bin/env python3
"""A deliberately simple second reader of Retrosheet's event files, sharing no code with the
engine: for k = 12, 18, 21, 24, 27 outs, how many pitching sides were hitless through k outs and how
many of those finished as official no-hitters (no hit all game, 27 or more outs).

It reads half-innings, not the game: a side is hitless through 3n outs when the first n half-innings
its opponent batted are finished and hold no hit (a hit is an event beginning S, D, T or H other
than SB, DI and HP). A half-inning is finished when another follows it; the game's last one is
finished when it reached three outs, counted from its plays by a few rules. No-hitters are then
sides with no hit at all and nine finished half-innings.

Usage: simple-odds.py ZIP|DIR...   (Retrosheet's <year>eve.zip files, folders of them or of
event files). Prints JSON: {"seasons": N, "sides": N, "rows": [[k, bids, no_hitters], ...]}.
"""

import json
import os
import re
import sys
import zipfile

KS = [12, 18, 21, 24, 27]
HIT = re.compile(r"^(S(?!B)|D(?!I)|T|H(?!P))")


def outs_of(event):
    """Outs a play records: batter out on a fielded ball or a strikeout, runners put out in the
    fielding sequence (1), caught stealing or picked off without an error, runners X'd in the
    advances without an error. Only used for a game's last half-inning."""
    event = re.sub(r"[!#?]", "", event)  # exceptional, uncertain and unknown-play marks
    basic, _, advances = event.partition(".")
    main = basic.split("/")[0]
    advances = [a for a in advances.split(";") if a]
    batter_safe = any(a.startswith("B-") for a in advances)
    outs = 0
    batter_out = False
    for part in main.split("+"):
        if part[:1].isdigit():
            groups = re.findall(r"\(([^)]*)\)", part)
            outs += sum(1 for g in groups if g in ("1", "2", "3", "B"))
            batter_out = batter_out or "(B)" in part or part[-1].isdigit()
        elif part.startswith("K"):
            batter_out = True
        elif part.startswith(("CS", "POCS", "PO")):
            groups = re.findall(r"\(([^)]*)\)", part)
            if not any("E" in g for g in groups):
                outs += 1
    for advance in advances:
        if "X" in advance[:3]:
            groups = re.findall(r"\(([^)]*)\)", advance)
            if any("E" in g for g in groups):
                continue
            if advance.startswith("B"):
                batter_out = True
            else:
                outs += 1
    if batter_out and not batter_safe:
        outs += 1
    return outs


def game_sides(lines):
    """Yields (year, [side, side]) per game: each side (by the team batting) as a list of
    half-innings [had_hit, plays]."""
    game = None
    halves = None
    current = None
    for line in lines:
        if line.startswith("id,"):
            if game is not None:
                yield game, halves
            game = line[3:].strip()
            halves = {"0": [], "1": []}
            current = None
        elif line.startswith("play,") and game is not None:
            fields = line.rstrip("\r\n").split(",")
            if len(fields) < 7:
                continue
            inning, side, event = fields[1], fields[2], fields[6]
            if event == "NP":
                continue
            if current != (inning, side):
                current = (inning, side)
                halves[side].append([False, []])
                halves["last"] = side
            half = halves[side][-1]
            if HIT.match(event):
                half[0] = True
            half[1].append(event)
    if game is not None:
        yield game, halves


def side_figures(halves, batting, last):
    """(finished hitless half-innings from the start, no-hitter) for the team batting `batting`."""
    innings = halves[batting]
    hitless = 0
    for index, (had_hit, plays) in enumerate(innings):
        final = batting == last and index == len(innings) - 1
        finished = not final or sum(outs_of(p) for p in plays) >= 3
        if had_hit or not finished:
            break
        hitless += 1
    no_hitter = not any(h for h, _ in innings) and hitless >= 9
    return hitless, no_hitter


def event_texts(paths):
    for path in paths:
        if os.path.isdir(path):
            yield from event_texts(sorted(os.path.join(path, n) for n in os.listdir(path)))
        elif path.endswith(".zip"):
            with zipfile.ZipFile(path) as archive:
                for name in sorted(archive.namelist()):
                    if name.upper().endswith((".EVN", ".EVA")):
                        yield archive.read(name).decode("latin-1")
        elif path.upper().endswith((".EVN", ".EVA")):
            with open(path, encoding="latin-1") as file:
                yield file.read()


def main(paths):
    bids = {k: 0 for k in KS}
    finished = {k: 0 for k in KS}
    sides = 0
    seasons = set()
    for text in event_texts(paths):
        for game, halves in game_sides(text.splitlines()):
            seasons.add(game[3:7])
            last = halves.get("last")
            for batting in ("0", "1"):
                sides += 1
                hitless, no_hitter = side_figures(halves, batting, last)
                for k in KS:
                    if hitless * 3 >= k:
                        bids[k] += 1
                        if no_hitter:
                            finished[k] += 1
    rows = [[k, bids[k], finished[k]] for k in KS]
    print(json.dumps({"seasons": len(seasons), "sides": sides, "rows": rows}))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: simple-odds.py ZIP|DIR...")
    main(sys.argv[1:])
