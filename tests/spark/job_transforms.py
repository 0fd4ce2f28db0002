"""Transform hooks the job tests name in [job] transform (module:function)."""

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def keep_payload_as_key(df: DataFrame) -> DataFrame:
    """Stage A -> B: carry the payload on, recording which row of A it came from."""
    return df.select(F.concat(F.col("payload"), F.lit("@a")).alias("payload"))
