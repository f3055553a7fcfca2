#!/usr/bin/env python3
"""Writes abs-2026-live.json: a live feed (`v1.1/game/{pk}/feed/live`) of a 2026 game in the bottom
of the 1st, written from the fields MLB documents and `../shared/docs/PROTOCOLS.md` gives — not a
recording (the data here ends in 2024; no 2026 feed is stored). What it holds:

- `gameData.absChallenges`: the away team (NYY, 147) has used two challenges, one upheld and one
  overturned, with one left; the home team (BOS, 111) one overturned, with both left.
- three challenged pitches in the top of the 1st: a called strike the batter challenged, upheld
  (review on the pitch); a ball the home catcher challenged, overturned to a strike (review on the
  pitch); a called strike the batter challenged, overturned to a ball (review on the play, the
  pitch marked `hasReview`, as a play-level review names it).
- the plate appearance under way in the bottom of the 1st: three pitches with pitch tracking
  (`pitchData.coordinates.pX/pZ`, `strikeZoneTop/Bottom`, type and speed): a ball, a called
  strike and a foul, the count 1-2.

Variants the tests make from it: `absChallenges` an empty object (a park without ABS), and
counters that disagree with the pitches. The players are fictional.

usage: make.py  (writes beside itself)
"""
import json, os

AWAY, HOME = 147, 111
away = [(701001 + i, name) for i, name in enumerate(
    ["Rafael Ortiz", "Caleb Marsh", "Dante Whitfield", "Omar Castillo", "Eli Brandt", "Jonah Pike",
     "Mateo Serrano", "Wes Calloway", "Kenji Mori"])]
home = [(702001 + i, name) for i, name in enumerate(
    ["Tobias Reyes", "Liam Carver", "Andre Holt", "Marco Vitale", "Sam Duarte", "Grady Nolan",
     "Victor Lutz", "Ray Okafor", "Felix Amador"])]
away_pitcher, home_pitcher = (701100, "Hugo Ferrand"), (702100, "Nate Whitcomb")
# Home catcher: the eighth batter.
positions = ["8", "6", "9", "3", "7", "10", "4", "2", "5"]  # the away side bats a DH (10)
home_positions = ["4", "8", "7", "3", "10", "9", "5", "2", "6"]


def person(p):
    return {"id": p[0], "fullName": p[1], "link": f"/api/v1/people/{p[0]}"}


def box(team_id, name, abbreviation, lineup, spots, pitcher):
    players = {}
    for i, (p, pos) in enumerate(zip(lineup, spots)):
        players[f"ID{p[0]}"] = {"person": person(p), "position": {"code": pos},
                                 "allPositions": [{"code": pos}], "battingOrder": f"{i + 1}00"}
    players[f"ID{pitcher[0]}"] = {"person": person(pitcher), "position": {"code": "1"},
                                  "allPositions": [{"code": "1"}]}
    return {"team": {"id": team_id, "name": name, "abbreviation": abbreviation},
            "pitchers": [pitcher[0]], "battingOrder": [p[0] for p in lineup], "players": players}


def pitch(index, number, code, words, balls, strikes, outs, review=None, has_review=False, data=None,
          kind=None):
    event = {"index": index, "pitchNumber": number, "type": "pitch", "isPitch": True,
             "details": {"call": {"code": code, "description": words}, "description": words, "code": code,
                         "isInPlay": code in ("X", "D", "E"), "isStrike": code in ("C", "S", "F", "X"),
                         "isBall": code == "B", "hasReview": has_review or review is not None},
             "count": {"balls": balls, "strikes": strikes, "outs": outs}}
    if kind:
        event["details"]["type"] = {"code": kind[0], "description": kind[1]}
    if data:
        event["pitchData"] = data
    if review:
        event["reviewDetails"] = review
    return event


def review(overturned, team, player):
    return {"isOverturned": overturned, "inProgress": False, "reviewType": "MJ", "challengeTeamId": team,
            "player": {"id": player[0], "link": f"/api/v1/people/{player[0]}"}}


def play(index, inning, half, batter, pitcher, events, result=None, outs=0, runners=(), count=(0, 0),
         play_review=None):
    record = {
        "result": {"type": "atBat", **({"event": result[0], "eventType": result[1], "description": result[2],
                                         "awayScore": 0, "homeScore": 0, "isOut": result[1] != "single"}
                                        if result else {})},
        "about": {"atBatIndex": index, "halfInning": half, "isTopInning": half == "top", "inning": inning,
                  "isComplete": result is not None, "hasReview": any(e.get("reviewDetails") for e in events)
                  or play_review is not None},
        "count": {"balls": count[0], "strikes": count[1], "outs": outs},
        "matchup": {"batter": person(batter), "pitcher": person(pitcher),
                    "batSide": {"code": "R"}, "pitchHand": {"code": "R"}},
        "runners": list(runners), "playEvents": events, "atBatIndex": index}
    if play_review:
        record["reviewDetails"] = play_review
    return record


def out(batter, kind, number, credit=("8", "f_putout")):
    return {"movement": {"originBase": None, "start": None, "end": None, "outBase": "1B", "isOut": True,
                         "outNumber": number},
            "details": {"event": kind[0], "eventType": kind[1], "runner": person(batter)},
            "credits": [{"position": {"code": credit[0]}, "credit": credit[1]}]}


def zone(x, z, speed):
    return {"startSpeed": speed, "strikeZoneTop": 3.41, "strikeZoneBottom": 1.58,
            "coordinates": {"pX": x, "pZ": z}}


hp, ap = home_pitcher, away_pitcher
plays = [
    # A called strike the batter challenged: upheld.
    play(0, 1, "top", away[0], hp, [
        pitch(0, 1, "B", "Ball", 1, 0, 0),
        pitch(1, 2, "C", "Called Strike", 1, 1, 0, review=review(False, AWAY, away[0])),
        pitch(2, 3, "S", "Swinging Strike", 1, 2, 0),
        pitch(3, 4, "X", "In play, out(s)", 1, 2, 1)],
        result=("Flyout", "field_out", f"{away[0][1]} flies out to center fielder."), outs=1,
        runners=[out(away[0], ("Flyout", "field_out"), 1)], count=(1, 2)),
    # A ball the home catcher challenged: overturned, a strike.
    play(1, 1, "top", away[1], hp, [
        pitch(0, 1, "C", "Called Strike", 0, 1, 1, review=review(True, HOME, home[7])),
        pitch(1, 2, "X", "In play, no out", 0, 1, 1)],
        result=("Single", "single", f"{away[1][1]} singles on a line drive to left fielder."), outs=1,
        runners=[{"movement": {"originBase": None, "start": None, "end": "1B", "outBase": None, "isOut": False},
                  "details": {"event": "Single", "eventType": "single", "runner": person(away[1])},
                  "credits": [{"position": {"code": "7"}, "credit": "f_fielded_ball"}]}], count=(0, 1)),
    # A called strike the batter challenged, overturned to a ball: the review on the play.
    play(2, 1, "top", away[2], hp, [
        pitch(0, 1, "B", "Ball", 1, 0, 1, has_review=True),
        pitch(1, 2, "S", "Swinging Strike", 1, 1, 1),
        pitch(2, 3, "X", "In play, out(s)", 1, 1, 2)],
        result=("Groundout", "field_out", f"{away[2][1]} grounds out, shortstop to first baseman."), outs=2,
        runners=[{"movement": {"originBase": "1B", "start": "1B", "end": "2B", "outBase": None, "isOut": False},
                  "details": {"event": "Groundout", "eventType": "field_out", "runner": person(away[1])}},
                 out(away[2], ("Groundout", "field_out"), 2, ("3", "f_putout"))], count=(1, 1),
        play_review=review(True, AWAY, away[2])),
    play(3, 1, "top", away[3], hp, [
        pitch(0, 1, "S", "Swinging Strike", 0, 1, 2),
        pitch(1, 2, "S", "Swinging Strike", 0, 2, 2),
        pitch(2, 3, "S", "Swinging Strike", 0, 3, 3)],
        result=("Strikeout", "strikeout", f"{away[3][1]} strikes out swinging."), outs=3,
        runners=[out(away[3], ("Strikeout", "strikeout"), 3, ("2", "f_putout"))], count=(0, 3)),
    # Under way: three tracked pitches.
    play(4, 1, "bottom", home[0], ap, [
        pitch(0, 1, "B", "Ball", 1, 0, 0, data=zone(-1.12, 2.21, 96.4), kind=("FF", "Four-Seam Fastball")),
        pitch(1, 2, "C", "Called Strike", 1, 1, 0, data=zone(0.31, 1.92, 86.2), kind=("SL", "Slider")),
        pitch(2, 3, "F", "Foul", 1, 2, 0, data=zone(0.48, 2.74, 88.0), kind=("CH", "Changeup"))],
        count=(1, 2)),
]
players = {f"ID{p[0]}": person(p) for p in away + home + [away_pitcher, home_pitcher]}
feed = {
    "copyright": "Written for No-Hitter Alerts' tests from the fields MLB documents; not MLB data.",
    "gamePk": 823456,
    "metaData": {"wait": 10, "timeStamp": "20260414_231512", "gameEvents": [], "logicalEvents": []},
    "gameData": {
        "game": {"pk": 823456, "type": "R", "doubleHeader": "N", "gameNumber": 1, "season": "2026"},
        "datetime": {"dateTime": "2026-04-14T23:10:00Z", "originalDate": "2026-04-14", "officialDate": "2026-04-14"},
        "status": {"abstractGameState": "Live", "codedGameState": "I", "detailedState": "In Progress",
                   "statusCode": "I"},
        "teams": {"away": {"id": AWAY, "name": "New York Yankees", "abbreviation": "NYY"},
                  "home": {"id": HOME, "name": "Boston Red Sox", "abbreviation": "BOS"}},
        "players": players,
        "venue": {"id": 3, "name": "Fenway Park"},
        "review": {"hasChallenges": True, "away": {"used": 0, "remaining": 1}, "home": {"used": 0, "remaining": 1}},
        "absChallenges": {"hasChallenges": True,
                          "away": {"usedSuccessful": 1, "usedFailed": 1, "remaining": 1},
                          "home": {"usedSuccessful": 1, "usedFailed": 0, "remaining": 2}},
    },
    "liveData": {
        "plays": {"allPlays": plays, "currentPlay": plays[-1]},
        "linescore": {"currentInning": 1, "inningHalf": "Bottom", "isTopInning": False, "scheduledInnings": 9,
                      "outs": 0, "balls": 1, "strikes": 2},
        "boxscore": {"teams": {"away": box(AWAY, "New York Yankees", "NYY", away, positions, away_pitcher),
                               "home": box(HOME, "Boston Red Sox", "BOS", home, home_positions, home_pitcher)}},
    },
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "abs-2026-live.json"), "w") as out_file:
    json.dump(feed, out_file, indent=1)
    out_file.write("\n")
