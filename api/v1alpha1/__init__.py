"""Models of the five nvidia.com/v1alpha1 custom resources."""
