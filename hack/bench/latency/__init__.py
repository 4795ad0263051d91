"""The latency benchmark: from a scale or image write to the Deployment, against its floor."""
