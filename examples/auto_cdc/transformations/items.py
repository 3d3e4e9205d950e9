# The pipeline's Python source: `spark-pipelines` runs it with `spark`, its session, set.
# ruff: noqa: F821
from pyspark import pipelines as dp


@dp.temporary_view()
def items_changes():
    """The change rows of shop.items: one per INSERT, UPDATE and DELETE, with its commit
    ts; micro-batches end at TiCDC's watermarks."""
    return (
        spark.readStream.format("ticdc")
        .option("kafka.bootstrap.servers", spark.conf.get("ticdc.example.bootstrap-servers"))
        .option("topic", spark.conf.get("ticdc.example.topic"))
        .option("startingOffsets", "earliest")
        .load()
    )


dp.create_streaming_table("items")
dp.create_auto_cdc_flow(
    target="items",
    source="items_changes",
    keys=["id"],
    sequence_by="_commit_ts",
    apply_as_deletes="_op = 'DELETE'",
    except_column_list=["_op", "_commit_ts", "_before", "_database", "_table"],
    stored_as_scd_type=1,
)
