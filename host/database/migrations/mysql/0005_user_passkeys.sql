-- PLACEHOLDER on branch jobs only: version 0005 is issue passkey's 0005_user_passkeys.sql.
-- It exists so that 0007_jobs loads here (versions have no gaps); at merge take the passkey branch's file.
SELECT 1;
