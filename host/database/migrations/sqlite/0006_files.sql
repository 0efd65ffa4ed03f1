-- PLACEHOLDER on branch jobs only: version 0006 is the files branch's 0006_files.sql.
-- It exists so that 0007_jobs loads here (versions have no gaps); at merge take the files branch's file.
SELECT 1;
