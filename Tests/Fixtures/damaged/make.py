#!/usr/bin/env python3
"""Writes the damaged-record variants and Chadwick's reading of them.

    make.py CWEVENT RETROSHEET_2020_DIR

Takes games of 2020CHA.EVA and 2020ANA.EVA (Data/retrosheet/2020) and writes, in this folder:
- variants.EVA.gz: one copy of a game per variant, each with one record damaged in one way (the
  game id kept; each variant's first line is a `com` naming the damage);
- cwevent.csv.gz: `cwevent -n -y 2020 -f 0,1,2,3,4,5,6,8,9,10,12,14,16,26,27,28,29,34,36,37,40,43,58,59,60,61,78,79,96`
  over it, the columns of `nohit events`;
- variants.txt: one line per variant, its label.

The variants are the kinds cwevent forgives, by rule (cw_game_read reads a record's fields by
position, ignores any after them and skips a record without the ones it needs; cw_parse_event's
grammar of runner advances and OA), generated over every record type and every advance note:
not the instances met in real files. Kinds where nohit reads differently from cwevent on purpose
are left out here and tested on their own (DamagedRecordKindsTests): a `start` record short of a
field (cwevent reads the game without that starter; nohit reports the incomplete lineup), an
`id` without the game id (cwevent stops reading the file), an empty `info,date` (cwevent's date
filter drops the game) or `info,htbf` (cwevent then credits the wrong pitcher), and a note or flag
cwevent does not know (cwevent stops reading the event there, mid-way).
"""
import gzip, os, re, shutil, subprocess, sys, tempfile

cwevent, season = sys.argv[1:3]
here = os.path.dirname(os.path.abspath(__file__))
FIELDS = "0,1,2,3,4,5,6,8,9,10,12,14,16,26,27,28,29,34,36,37,40,43,58,59,60,61,78,79,96"


def games(name):
    lines = open(os.path.join(season, name), newline="").read().split("\n")
    starts = [i for i, l in enumerate(lines) if l.startswith("id,")] + [len(lines)]
    return [lines[a:b] for a, b in zip(starts, starts[1:])]


variants = []  # (label, lines)


def variant(label, game, index, text):
    lines = list(game)
    if text is None:
        del lines[index]
    else:
        lines[index] = text
    variants.append((label, [lines[0], "com,\"variant: %s\"" % label.replace('"', "'")] + lines[1:]))


cha = games("2020CHA.EVA")
ana = games("2020ANA.EVA")
pool = cha + ana

# Every record type with one field too many (empty or not), and with one too few.
for record in ["version", "info", "start", "sub", "play", "com", "data", "badj", "padj", "ladj", "radj", "presadj", "id"]:
    found = [(g, i) for g in pool for i, l in enumerate(g) if l.startswith(record + ",")]
    if not found:
        continue
    game, index = found[0]
    line = game[index]
    variant("%s +empty field" % record, game, index, line + ",")
    variant("%s +1 field" % record, game, index, line + ",x")
    variant("%s +2 fields" % record, game, index, line + ",x,")
    if record not in ("start", "id", "com", "data"):
        variant("%s -1 field" % record, game, index, line.rsplit(",", 1)[0])

# Every info key with its value empty, with a stray empty field, and with no value.
game = cha[0]
for index, line in enumerate(game):
    if line.startswith("info,"):
        key = line.split(",")[1]
        if key in ("date", "htbf"):
            continue
        variant("info,%s empty" % key, game, index, "info,%s," % key)
        variant("info,%s ,," % key, game, index, "info,%s,," % key)
        variant("info,%s no value" % key, game, index, "info,%s" % key)

# Adjustment records with a value that cannot be read.
game = cha[1]
first_play = next(i for i, l in enumerate(game) if l.startswith("play,"))
for record, text in [("ladj", "ladj,,"), ("ladj", "ladj,0,x"), ("badj", "badj,nobod001,"), ("padj", "padj,nobod001,Q")]:
    variant("%s unreadable (%s)" % (record, text), game[:first_play] + [text] + game[first_play:], first_play, text)

# Every note cwevent reads on a runner advance, on advances of every kind of play.
notes = ["NR", "NORBI", "UR", "TUR", "WP", "PB", "TH", "TH1", "TH2", "THH", "INT", "SB", "SB2", "SB3", "E4", "E4/TH",
         "E4/INT", "4", "4/TH", "4/INT", "4/BINT", "4/OBS", "4/G", "4/U", "4/AP", "4/BR", "4/FO", "46", "2E4"]
plays = []
for game in pool:
    for index, line in enumerate(game):
        if not line.startswith("play,"):
            continue
        event = line.split(",")[6]
        kind = re.match(r"[A-Z]*", event).group(0) or "out"
        if re.search(r"\.[B123]-[123H]", event) and kind not in [k for k, _, _ in plays]:
            plays.append((kind, game, index))
for kind, game, index in plays:
    fields = game[index].split(",")
    event = fields[6]
    advance = re.search(r"\.[B123]-[123H](\([^)]*\))*", event)
    for note in notes:
        text = event[: advance.end()] + "(%s)" % note + event[advance.end():]
        variant("(%s) on %s" % (note, event), game, index, ",".join(fields[:6] + [text]))
    if event.startswith(("WP.", "PB.", "DI.")):
        rest = event[advance.start():]
        for primary in ["OA", "BK", "OA/TH", "OA/TH2", "OA/THH", "OA/DP", "OA/INT", "OA/BINT", "OA/AP", "OA/OBS",
                        "OA/MREV", "OA/UREV", "OA/NDP", "OA/R"]:
            variant("%s%s" % (primary, rest), game, index, ",".join(fields[:6] + [primary + rest]))
        for note in ["SB", "SB2", "NR", "UR", "WP"]:
            text = "BK" + rest[: advance.end() - advance.start()] + "(%s)" % note + rest[advance.end() - advance.start():]
            variant(text, game, index, ",".join(fields[:6] + [text]))

# A stolen base, or a caught stealing, with a pickoff as its second half (cwevent 2026).
for game in pool:
    hits = [i for i, l in enumerate(game) if re.match(r"play,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,SB2$", l)]
    if hits:
        fields = game[hits[0]].split(",")
        for text in ["SB2;PO1(13)", "SB2;POCS2(14)", "SB2;POSB2", "CS2(24);PO1(13)", "CS2(24);POSB2"]:
            variant(text, game, hits[0], ",".join(fields[:6] + [text]))
        break

work = tempfile.mkdtemp()
shutil.copy(os.path.join(season, "TEAM2020"), work)
text = "\n".join("\n".join(lines) for _, lines in variants) + "\n"
open(os.path.join(work, "variants.EVA"), "w", newline="").write(text)
with gzip.open(os.path.join(here, "variants.EVA.gz"), "wt", newline="") as f:
    f.write(text)
out = subprocess.run([cwevent, "-n", "-y", "2020", "-f", FIELDS, "variants.EVA"], cwd=work, capture_output=True,
                     text=True, check=True).stdout
with gzip.open(os.path.join(here, "cwevent.csv.gz"), "wt", newline="") as f:
    f.write(out)
open(os.path.join(here, "variants.txt"), "w").write("\n".join(label for label, _ in variants) + "\n")
print(len(variants), "variants,", out.count("\n") - 1, "rows")
