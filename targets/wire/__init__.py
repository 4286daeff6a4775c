"""``wire:`` targets: real consumers in member drivers (`drivers`) on a cluster backend
(`backends`), driven by the state machine's events and judged from their own log (`log`)
and from the coordinator's side (`rounds`, `settle`). `group.WireGroup` ties them together;
`clients` knows which driver runs which client; `driver_process` is the harness's end of the
member-driver contract."""
