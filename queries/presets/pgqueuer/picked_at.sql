-- purpose: when a picked pgqueuer job was claimed: its claim sets `updated` (as do a retry and a hold, which leave it no longer picked); NULL for the other states
CASE WHEN t.status = 'picked' THEN t.updated END
