SELECT tr.name FROM sys.triggers AS tr WHERE tr.parent_id = OBJECT_ID(?) AND tr.is_disabled = 0
