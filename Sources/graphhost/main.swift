import ArgumentParser

GraphHostCommand.main()
