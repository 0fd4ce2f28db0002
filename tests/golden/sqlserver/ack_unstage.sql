DROP TABLE #sqlqueue_acks
