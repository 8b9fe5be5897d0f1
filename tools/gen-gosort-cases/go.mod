module github.com/karplint/karplint/tools/gen-gosort-cases

go 1.26
