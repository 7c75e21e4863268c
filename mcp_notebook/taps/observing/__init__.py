"""The notebook's model of one tapped session: `observer` (`SessionObserver`: records in, a trace in
the client's view, both sides checked), `tracking` (era, version, requests in flight both ways),
`pings` (the ping judgement, per the spec's MUST) and `health` (`TapHealth`).
"""
