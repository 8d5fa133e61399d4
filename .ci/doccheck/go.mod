module doccheck

go 1.25.0
