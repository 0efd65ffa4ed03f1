-- 0007 reserved: a placeholder in the notices branch for the migration another branch owns (drop it at merge).
SELECT 1;
