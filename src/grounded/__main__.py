from grounded.cli import main

main()
