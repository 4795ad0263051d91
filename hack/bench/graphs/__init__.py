"""Graph benchmark: N three-service DynamoGraphDeployments on the simulated local cluster."""
