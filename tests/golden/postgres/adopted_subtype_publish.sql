INSERT INTO "Notification_Email" ("EnqueuedAt", "Address", "Subject") SELECT "EnqueuedAt", "Address", "Subject" FROM "Notification_Email_sqlqueue_staging" WHERE "stage_tag" = %s
