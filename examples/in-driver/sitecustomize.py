# In-driver lineage-quality without changing the job (docs/in-driver.md):
#   spark-submit --py-files examples/in-driver/sitecustomize.py \
#     --conf spark.lineageQuality.contracts=contracts/ job.py
# spark-submit puts --py-files on the driver Python's path before it starts, so Python imports
# this file at start-up. lineage-quality must be installed in that Python.
try:
    from lineage_quality.driver.auto import install
except ImportError:  # not installed in this interpreter: the job runs without it
    pass
else:
    install()
