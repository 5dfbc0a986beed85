-- When each capture's party first asked for its host's lease (its place in
-- the host's line, host_waiters.since), kept with the capture: with the
-- start and the delay it is the evidence that the round robin between
-- organizations held (`ledgerctl hosts politeness`: the most turns one other
-- organization took while an organization waited, ready, for its own).
-- NULL for captures recorded before this column existed.
ALTER TABLE host_captures ADD COLUMN asked_at timestamptz;
