"""Batch jobs that run hpcio on a cluster: one model (jobs.model), rendered as a Slurm or PBS
script (jobs.scripts) or a Kubernetes manifest (jobs.k8s)."""
