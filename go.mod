module github.com/tilefit/tilefit

go 1.26.8
