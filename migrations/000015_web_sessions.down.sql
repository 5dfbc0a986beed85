DROP TABLE IF EXISTS web_sign_ins;
DROP TABLE IF EXISTS web_sessions;
