-- 0005 reserved: placeholder for the migration number 0005 assigned to another branch (parallel issue work).
-- It changes nothing; the merge replaces it with that branch's 0005 file.
SELECT 1;
