"""The ablation study: systems x replicates, tuned, evaluated and plotted."""
