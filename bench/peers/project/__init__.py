"""What every peer project shares: settings, a tenant model, the rate budget, seeding."""
