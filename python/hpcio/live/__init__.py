"""Live output while runs go: progress lines, bars and what a rank 0 says as it works."""
