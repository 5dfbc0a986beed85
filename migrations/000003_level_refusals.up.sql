-- The results a level report was refused for (docs/security.md): a result
-- whose URL is not a pending page of the crawl at that depth, or whose
-- manifest does not belong to that page and crawl, is never admitted; what
-- was refused and why is kept with the level, and a replay answers it again.
ALTER TABLE crawl_levels
    ADD COLUMN refused jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(refused) = 'array');
