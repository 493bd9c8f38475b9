module svc/tests/gocompat/golden

go 1.22
