-- Console sign-in (OIDC authorization-code flow with PKCE) and its sessions.
--
-- A browser holds only a random secret in a cookie; the ledger keeps its
-- SHA-256, so a copy of this table opens no session. A session says who
-- signed in (the ID token's subject and organizations) and ends at the ID
-- token's expiry or at sign-out, whichever comes first: sign-out deletes the
-- row, so a replayed cookie finds nothing.
CREATE TABLE web_sessions (
    secret_hash   bytea PRIMARY KEY CHECK (octet_length(secret_hash) = 32),
    subject       text NOT NULL,
    organizations text[] NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX web_sessions_expires_idx ON web_sessions (expires_at);

-- A sign-in under way: the state, nonce and PKCE verifier the callback
-- checks, bound to the browser that started it (the hash of its sign-in
-- cookie). Each is taken once: the callback deletes it whatever follows.
CREATE TABLE web_sign_ins (
    state_hash   bytea PRIMARY KEY CHECK (octet_length(state_hash) = 32),
    browser_hash bytea NOT NULL CHECK (octet_length(browser_hash) = 32),
    nonce        text NOT NULL,
    verifier     text NOT NULL,
    return_to    text NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX web_sign_ins_expires_idx ON web_sign_ins (expires_at);
